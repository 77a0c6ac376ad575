// Unit tests of the narrow spellings (node --test): hash routes as the reference encodes them,
// the search syntax, and which live messages a narrow takes.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  encodeHashComponent, decodeHashComponent, narrowToHash, hashToNarrow, parseSearch, narrowToSearch,
  messageMatches, dmKey,
} from "../src/narrow.js";

const streams = new Map([[12, { stream_id: 12, name: "design team" }]]);
const users = new Map([[5, { user_id: 5, email: "ada@x.org", full_name: "Ada" }], [7, { user_id: 7, email: "bo@x.org", full_name: "Bo" }]]);
const store = {
  streams, users,
  streamByName: (n) => [...streams.values()].find((s) => s.name === n) || null,
  userByText: (t) => [...users.values()].find((u) => u.email === t || u.full_name === t) || null,
};

test("hash components use the reference's encoding", () => {
  assert.equal(encodeHashComponent("lunch. (today) 100%"), "lunch.2E.20.28today.29.20100.25");
  assert.equal(decodeHashComponent("lunch.2E.20.28today.29.20100.25"), "lunch. (today) 100%");
});

test("a channel and topic narrow round-trips through the hash", () => {
  const narrow = [{ operator: "channel", operand: 12, negated: false }, { operator: "topic", operand: "a.b c", negated: false }];
  const hash = narrowToHash(narrow, store);
  assert.equal(hash, "#narrow/channel/12-design-team/topic/a.2Eb.20c");
  assert.deepEqual(hashToNarrow(hash), narrow);
});

test("reference hashes with stream/ and dm ids parse", () => {
  assert.deepEqual(hashToNarrow("#narrow/stream/12-design-team"), [{ operator: "channel", operand: 12, negated: false }]);
  assert.deepEqual(hashToNarrow("#narrow/dm/5,7-group"), [{ operator: "dm", operand: [5, 7], negated: false }]);
  assert.deepEqual(hashToNarrow("#narrow/-is/starred"), [{ operator: "is", operand: "starred", negated: true }]);
  assert.equal(hashToNarrow("#settings/profile"), null);
});

test("search text becomes operators and free text, and back", () => {
  const narrow = parseSearch('channel:"design team" sender:ada@x.org has:image -is:starred hello world', store);
  assert.deepEqual(narrow, [
    { operator: "channel", operand: 12, negated: false },
    { operator: "sender", operand: 5, negated: false },
    { operator: "has", operand: "image", negated: false },
    { operator: "is", operand: "starred", negated: true },
    { operator: "search", operand: "hello world", negated: false },
  ]);
  assert.equal(narrowToSearch(narrow, store), 'channel:"design team" sender:ada@x.org has:image -is:starred hello world');
});

test("live messages: the narrow decides when it can, and says when it cannot", () => {
  const m = { type: "stream", stream_id: 12, subject: "Lunch", sender_id: 5, flags: [] };
  assert.equal(messageMatches([{ operator: "channel", operand: 12 }, { operator: "topic", operand: "lunch" }], m, 7), true);
  assert.equal(messageMatches([{ operator: "channel", operand: 13 }], m, 7), false);
  assert.equal(messageMatches([{ operator: "search", operand: "x" }], m, 7), null);
  const dm = { type: "private", display_recipient: [{ id: 5 }, { id: 7 }], sender_id: 5, flags: [] };
  assert.equal(messageMatches([{ operator: "dm", operand: [5] }], dm, 7), true);
  assert.equal(dmKey([7], 7), "7");
  assert.equal(dmKey([9, 5, 7], 7), "5,9");
});
