// zulip-js (the official JavaScript client, npm `zulip-js`, pinned in package.json) against the
// real `parley` binary.
//
// Starts `parley` on a fresh data directory (and, with --database-url, a given database), reads
// the owner's credentials from DATA/owner.zuliprc with zulip-js's own zuliprc reader, creates a
// second user through the API and logs in as that user with a password (zulip-js fetches the key
// with POST /fetch_api_key). Then, through zulip-js's own calls only, the way its README and
// examples use them: register an event queue, send a channel message and direct messages, add
// and remove a reaction, update read and starred flags, send typing notifications, render
// Markdown, edit a message, fetch messages with anchors and narrows, long-poll the queue until the
// message, reaction and flag events arrive, and delete the queue.
//
// zulip-js sends POST bodies as multipart/form-data (form-data package) and the parameters of
// GET, PATCH and DELETE in the query string; every call must answer result "success".
//
// Usage: node test_zulip_js.mjs --parley PATH [--database-url URL]
// Ends with the line "zulip-js: N passed, M failed"; exits non-zero when anything failed.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zulipInit from 'zulip-js';

const CALL_TIMEOUT_MS = 30_000;
const WATCHDOG_MS = 120_000;
const HEARTBEAT_SECONDS = 5;

let passed = 0;
let failed = 0;

function check(name, condition, detail = '') {
  if (condition) {
    passed += 1;
    console.log(`ok   ${name}`);
  } else {
    failed += 1;
    let text = typeof detail === 'string' ? detail : JSON.stringify(detail);
    if (text && text.length > 6000) text = `${text.slice(0, 6000)}...`;
    console.log(`FAIL ${name} ${text ?? ''}`);
  }
}

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--parley') args.parley = argv[(i += 1)];
    else if (argv[i] === '--database-url') args.databaseUrl = argv[(i += 1)];
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!args.parley) throw new Error('usage: test_zulip_js.mjs --parley PATH [--database-url URL]');
  return args;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function sleep(ms) {
  return new Promise((resolve) => {
    setTimeout(resolve, ms);
  });
}

function withTimeout(promise, label, ms = CALL_TIMEOUT_MS) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Ready once GET /health answers: the port is bound before start-up finishes.
function canConnect(port) {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/health', timeout: 2000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.once('timeout', () => request.destroy());
    request.once('error', () => resolve(false));
  });
}

class Server {
  constructor(parley, dataDir, port, databaseUrl, logPath) {
    this.command = [
      parley,
      ['--data-dir', dataDir, '--bind', `127.0.0.1:${port}`, '--heartbeat-seconds', String(HEARTBEAT_SECONDS)],
    ];
    if (databaseUrl) this.command[1].push('--database-url', databaseUrl);
    this.port = port;
    this.logPath = logPath;
    this.proc = null;
    this.exitCode = undefined;
  }

  async start() {
    const env = { ...process.env, PARLEY_LOG: process.env.PARLEY_LOG || 'warn' };
    delete env.DATABASE_URL;
    const log = fs.openSync(this.logPath, 'a');
    this.proc = spawn(this.command[0], this.command[1], { env, stdio: ['ignore', log, log] });
    fs.closeSync(log);
    this.exited = new Promise((resolve) => {
      this.proc.once('exit', (code, sig) => {
        this.exitCode = code === null ? `signal ${sig}` : code;
        resolve(this.exitCode);
      });
    });
    this.proc.once('error', (error) => {
      this.exitCode = `spawn error: ${error.message}`;
    });
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (this.exitCode !== undefined) throw new Error(`parley exited early: ${this.exitCode}\n${this.logTail()}`);
      if (await canConnect(this.port)) return;
      await sleep(50);
    }
    throw new Error('parley did not start');
  }

  // SIGTERM, then SIGKILL after 30 s; resolves to the exit code (or a description).
  async stop() {
    if (!this.proc || this.exitCode !== undefined) return this.exitCode;
    this.proc.kill('SIGTERM');
    const killer = setTimeout(() => this.proc.kill('SIGKILL'), 30_000);
    const code = await this.exited;
    clearTimeout(killer);
    return code;
  }

  killNow() {
    if (this.proc && this.exitCode === undefined) this.proc.kill('SIGKILL');
  }

  logTail(n = 40) {
    try {
      return fs.readFileSync(this.logPath, 'utf8').split('\n').slice(-n - 1).join('\n');
    } catch {
      return '';
    }
  }
}

// One zulip-js call, with a timeout; checks result === "success" and returns the answer.
async function call(label, promise) {
  let res;
  try {
    res = await withTimeout(promise, label);
  } catch (error) {
    check(label, false, `threw ${error.stack || error}`);
    return {};
  }
  check(label, res && res.result === 'success', res);
  return res || {};
}

async function pollUntil(client, queueId, lastEventId, label, predicates, deadlineMs = 15_000) {
  const deadline = Date.now() + deadlineMs;
  const pending = new Map(Object.entries(predicates));
  const seen = [];
  let last = lastEventId;
  while (pending.size && Date.now() < deadline) {
    const res = await call(`${label}: events.retrieve (long poll)`, client.events.retrieve({
      queue_id: queueId,
      last_event_id: last,
      dont_block: false,
    }));
    const events = Array.isArray(res.events) ? res.events : [];
    if (!events.length && res.result !== 'success') break;
    for (const event of events) {
      last = Math.max(last, event.id);
      seen.push(event);
      for (const [name, predicate] of pending) {
        try {
          if (predicate(event)) pending.delete(name);
        } catch {
          // a malformed event does not match
        }
      }
    }
  }
  for (const name of Object.keys(predicates)) {
    check(`${label}: event ${name}`, !pending.has(name), `not seen in ${JSON.stringify(seen).slice(0, 3000)}`);
  }
  return last;
}

async function run(site, zuliprc) {
  // The owner, from the zuliprc parley wrote (zulip-js's own reader).
  const owner = await zulipInit({ zuliprc });
  check('zulip-js reads owner.zuliprc', owner.config.realm === site && owner.config.apiKey, owner.config.realm);
  const settings = await call('server.settings', owner.server.settings());
  check('server settings name the feature level', typeof settings.zulip_feature_level === 'number', settings);
  const ownerProfile = await call('users.me.getProfile (owner)', owner.users.me.getProfile());
  const ownerId = ownerProfile.user_id;

  // A second user, created through the API (multipart POST /users).
  const created = await call('users.create', owner.users.create({
    email: 'js-user@parley.local',
    password: 'js-user-password',
    full_name: 'Jay Script',
  }));
  const userId = created.user_id;
  // Logging in with a password: zulip-js fetches the API key itself.
  let member;
  try {
    member = await withTimeout(zulipInit({
      username: 'js-user@parley.local',
      password: 'js-user-password',
      realm: site,
    }), 'zulipInit with a password');
  } catch (error) {
    check('zulipInit with a password (POST /fetch_api_key)', false, String(error.stack || error));
    return;
  }
  check('zulipInit with a password fetches an API key', typeof member.config.apiKey === 'string' && member.config.apiKey.length > 0,
    member.config);
  const me = await call('users.me.getProfile (member)', member.users.me.getProfile());
  check('the key is the new user\'s', me.user_id === userId && me.full_name === 'Jay Script', me);

  await call('users.me.subscriptions.add (create channel js)', owner.users.me.subscriptions.add({
    subscriptions: [{ name: 'js', description: 'zulip-js talks here' }],
    principals: [userId],
  }));
  const streamId = await call('streams.getStreamId', member.streams.getStreamId('js'));
  const subs = await call('streams.subscriptions.retrieve', member.streams.subscriptions.retrieve());
  check('the member is subscribed to js', (subs.subscriptions || []).some((s) => s.name === 'js'), subs);
  await call('streams.retrieve', member.streams.retrieve());
  await call('users.retrieve', member.users.retrieve());
  await call('emojis.retrieve', member.emojis.retrieve());
  await call('users.me.alertWords.retrieve', member.users.me.alertWords.retrieve());

  // An event queue for the member.
  const queue = await call('queues.register', member.queues.register({
    event_types: ['message', 'reaction', 'update_message_flags', 'update_message', 'typing'],
  }));
  const queueId = queue.queue_id;
  check('queues.register answers a queue id and last_event_id',
    typeof queueId === 'string' && typeof queue.last_event_id === 'number', queue);

  // Messages: a channel message (README style, `subject`), direct messages both ways.
  const channelMessage = await call('messages.send (channel)', owner.messages.send({
    to: 'js',
    type: 'stream',
    subject: 'zulip-js',
    content: 'hello from **zulip-js** @**Jay Script**',
  }));
  const ownMessage = await call('messages.send (channel, member)', member.messages.send({
    to: 'js',
    type: 'stream',
    topic: 'zulip-js',
    content: 'a reply :octopus:',
  }));
  const directMessage = await call('messages.send (direct, to an email)', member.messages.send({
    to: ownerProfile.email,
    type: 'private',
    content: 'a direct message from zulip-js',
  }));
  const directBack = await call('messages.send (direct, to a list of ids)', owner.messages.send({
    to: [userId],
    type: 'direct',
    content: 'and back',
  }));

  // Reactions, flags, typing, rendering, an edit.
  await call('reactions.add', member.reactions.add({
    message_id: channelMessage.id,
    emoji_name: 'octopus',
    emoji_code: '1f419',
    reaction_type: 'unicode_emoji',
  }));
  await call('reactions.add (by name only)', member.reactions.add({ message_id: directBack.id, emoji_name: 'smile' }));
  await call('reactions.remove (DELETE, query string)', member.reactions.remove({
    message_id: directBack.id,
    emoji_name: 'smile',
  }));
  await call('messages.flags.add read', member.messages.flags.add({ messages: [channelMessage.id, directBack.id], flag: 'read' }));
  await call('messages.flags.add starred', member.messages.flags.add({ messages: [channelMessage.id], flag: 'starred' }));
  await call('messages.flags.remove starred', member.messages.flags.remove({ messages: [channelMessage.id], flag: 'starred' }));
  await call('messages.flags.add starred again', member.messages.flags.add({ messages: [directBack.id], flag: 'starred' }));
  await call('typing.send start (direct)', owner.typing.send({ to: [userId], op: 'start' }));
  await call('typing.send stop (direct)', owner.typing.send({ to: [userId], op: 'stop' }));
  const rendered = await call('messages.render', member.messages.render('**bold** and `code` :smile:'));
  check('messages.render renders Markdown', typeof rendered.rendered === 'string'
    && rendered.rendered.includes('<strong>bold</strong>') && rendered.rendered.includes('<code>code</code>'), rendered);
  const renderedObject = await call('messages.render (params object)', member.messages.render({ content: '# Title' }));
  check('messages.render with an object', typeof renderedObject.rendered === 'string' && renderedObject.rendered.includes('Title'),
    renderedObject);
  await call('messages.update (PATCH, query string)', member.messages.update({
    message_id: ownMessage.id,
    content: 'an edited reply',
  }));

  // Reading messages back.
  const channelPage = await call('messages.retrieve (newest, channel and topic narrow)', member.messages.retrieve({
    anchor: 'newest',
    num_before: 10,
    num_after: 0,
    narrow: [{ operator: 'stream', operand: 'js' }, { operator: 'topic', operand: 'zulip-js' }],
  }));
  const channelIds = (channelPage.messages || []).map((m) => m.id);
  check('the channel narrow has both channel messages', channelIds.includes(channelMessage.id) && channelIds.includes(ownMessage.id),
    channelIds);
  const edited = (channelPage.messages || []).find((m) => m.id === ownMessage.id);
  check('the edit is visible', edited && edited.content.includes('an edited reply'), edited);
  const withReaction = (channelPage.messages || []).find((m) => m.id === channelMessage.id);
  check('the reaction and flags are visible', withReaction
    && withReaction.reactions.some((r) => r.emoji_name === 'octopus' && r.user_id === userId)
    && withReaction.flags.includes('read') && withReaction.flags.includes('mentioned') && !withReaction.flags.includes('starred'),
  withReaction);
  const recent = await call('messages.retrieve (anchor 1000000000, is:private)', member.messages.retrieve({
    anchor: 1000000000,
    num_before: 10,
    num_after: 1,
    narrow: [{ operator: 'is', operand: 'private' }],
  }));
  const recentIds = (recent.messages || []).map((m) => m.id);
  check('the direct messages, oldest first', recentIds.length === 2 && recentIds[0] === directMessage.id
    && recentIds[1] === directBack.id, recentIds);
  const around = await call('messages.retrieve (numeric anchor)', member.messages.retrieve({
    anchor: channelMessage.id,
    num_before: 1,
    num_after: 1,
  }));
  check('the numeric anchor is found', around.found_anchor === true
    && (around.messages || []).some((m) => m.id === channelMessage.id), around);
  const starred = await call('messages.retrieve (is:starred)', member.messages.retrieve({
    anchor: 'newest',
    num_before: 5,
    num_after: 0,
    narrow: [{ operator: 'is', operand: 'starred' }],
  }));
  check('is:starred has the starred direct message', (starred.messages || []).map((m) => m.id).join() === String(directBack.id), starred);
  const single = await call('messages.getById', member.messages.getById({ message_id: channelMessage.id }));
  check('getById answers the message', single.message && single.message.id === channelMessage.id, single);
  const topics = await call('streams.topics.retrieve', member.streams.topics.retrieve({ stream_id: streamId.stream_id }));
  check('the channel\'s topic is listed', (topics.topics || []).some((t) => t.name === 'zulip-js'), topics);

  // The queue saw it all.
  let last = queue.last_event_id;
  last = await pollUntil(member, queueId, last, 'queue', {
    'message (channel, from the owner)': (e) => e.type === 'message' && e.message.id === channelMessage.id,
    'message (own channel reply)': (e) => e.type === 'message' && e.message.id === ownMessage.id,
    'message (direct, sent)': (e) => e.type === 'message' && e.message.id === directMessage.id,
    'message (direct, received)': (e) => e.type === 'message' && e.message.id === directBack.id,
    'reaction add': (e) => e.type === 'reaction' && e.op === 'add' && e.message_id === channelMessage.id,
    'reaction remove': (e) => e.type === 'reaction' && e.op === 'remove' && e.message_id === directBack.id,
    'update_message_flags add read': (e) => e.type === 'update_message_flags' && e.op === 'add' && e.flag === 'read',
    'update_message_flags remove starred': (e) => e.type === 'update_message_flags' && e.op === 'remove' && e.flag === 'starred',
    'update_message (the edit)': (e) => e.type === 'update_message' && e.message_id === ownMessage.id,
    'typing start': (e) => e.type === 'typing' && e.op === 'start' && e.sender.user_id === ownerId,
  });
  const later = await call('messages.send (while polling)', owner.messages.send({
    to: 'js', type: 'stream', topic: 'zulip-js', content: 'one more',
  }));
  await pollUntil(member, queueId, last, 'queue, later', {
    'message (sent after the first polls)': (e) => e.type === 'message' && e.message.id === later.id,
  });

  // Deleting the queue; polling it again is an error the client can recognise.
  await call('queues.deregister (DELETE /events, query string)', member.queues.deregister({ queue_id: queueId }));
  const gone = await withTimeout(member.events.retrieve({ queue_id: queueId, last_event_id: -1, dont_block: true }),
    'events.retrieve on a deleted queue');
  check('a deleted queue answers BAD_EVENT_QUEUE_ID', gone.result === 'error' && gone.code === 'BAD_EVENT_QUEUE_ID', gone);
  const deleted = await call('messages.deleteById (owner)', owner.messages.deleteById({ message_id: later.id }));
  check('deleteById', deleted.result === 'success', deleted);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-zulip-js-'));
  const logPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'parley-zulip-js-log-')), 'parley.log');
  const port = await freePort();
  const site = `http://127.0.0.1:${port}`;
  const server = new Server(args.parley, dataDir, port, args.databaseUrl, logPath);
  const emergency = () => server.killNow();
  process.on('exit', emergency);
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      emergency();
      process.exit(130);
    });
  }
  const watchdog = setTimeout(() => {
    console.log(`FAIL watchdog: the script took longer than ${WATCHDOG_MS / 1000} s\n${server.logTail()}`);
    failed += 1;
    console.log(`zulip-js: ${passed} passed, ${failed} failed`);
    emergency();
    process.exit(1);
  }, WATCHDOG_MS);
  try {
    await server.start();
    await run(site, path.join(dataDir, 'owner.zuliprc'));
  } catch (error) {
    check('no exception', false, `${error.stack || error}\n${server.logTail()}`);
  } finally {
    const code = await server.stop();
    check('parley shuts down cleanly on SIGTERM', code === 0, `${code}\n${server.logTail()}`);
    clearTimeout(watchdog);
  }
  if (failed) console.log(`--- parley log (last lines) ---\n${server.logTail(60)}`);
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(path.dirname(logPath), { recursive: true, force: true });
  const backend = args.databaseUrl ? 'PostgreSQL' : 'SQLite';
  console.log(`zulip-js ${JSON.parse(fs.readFileSync(new URL('./node_modules/zulip-js/package.json', import.meta.url))).version} against parley on ${backend} (${((Date.now() - started) / 1000).toFixed(1)} s):`);
  console.log(`zulip-js: ${passed} passed, ${failed} failed`);
  process.exitCode = failed || !passed ? 1 : 0;
}

main();
