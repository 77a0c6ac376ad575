/** The public API under /json/..., authenticated by the session cookie (same handlers as /api/v1).
 * Every state-changing request carries the CSRF token from the page params, as the contract asks. */

/** The page params the server puts in `<script id="page-params">`. */
export const pageParams = (() => {
  const el = document.getElementById("page-params");
  try {
    return el ? JSON.parse(el.textContent) : {};
  } catch {
    return {};
  }
})();

/** An answer with `result: "error"` (or an HTTP failure without an envelope). `code` is the spec's
 * error code (`BAD_EVENT_QUEUE_ID`, `RATE_LIMIT_HIT`, ...); `network` is true when the server could
 * not be reached at all, which callers treat as "retry later" rather than as a refusal. */
export class ApiError extends Error {
  constructor(msg, { status = 0, code = "", body = null, network = false } = {}) {
    super(msg);
    this.status = status;
    this.code = code;
    this.body = body;
    this.network = network;
  }
}

/** Form-encodes parameters the way the reference clients do: lists and objects as JSON. */
function encode(data) {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(data || {})) {
    if (value === undefined) continue;
    form.append(key, typeof value === "object" && value !== null ? JSON.stringify(value) : String(value));
  }
  return form;
}

/** One request; resolves with the JSON body of a success, throws ApiError otherwise. */
export async function call(method, path, data, { signal, body } = {}) {
  let url = "/json" + path;
  const init = { method, credentials: "same-origin", headers: {}, signal };
  if (method === "GET") {
    const query = encode(data).toString();
    if (query) url += "?" + query;
  } else {
    init.headers["X-CSRFToken"] = pageParams.csrf_token || "";
    if (body) init.body = body;
    else if (data) init.body = encode(data);
  }
  let response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError("Cannot reach the server.", { network: true });
  }
  let json = null;
  try {
    json = await response.json();
  } catch {
    // a proxy's error page or a restart in progress
  }
  if (response.ok && json && json.result === "success") return json;
  const msg = (json && json.msg) || `The server answered ${response.status}.`;
  throw new ApiError(msg, {
    status: response.status,
    code: (json && json.code) || "",
    body: json,
    network: !json && response.status >= 500,
  });
}

export const get = (path, data, opts) => call("GET", path, data, opts);
export const post = (path, data, opts) => call("POST", path, data, opts);
export const patch = (path, data, opts) => call("PATCH", path, data, opts);
export const del = (path, data, opts) => call("DELETE", path, data, opts);

/** Uploads one file (POST /user_uploads, multipart); resolves with {url, filename}. */
export async function uploadFile(file) {
  const form = new FormData();
  form.append("file", file, file.name || "pasted-image.png");
  const answer = await call("POST", "/user_uploads", null, { body: form });
  return { url: answer.url || answer.uri, filename: answer.filename || file.name };
}

/** Signs out: the session endpoint outside /json (POST /accounts/logout/). */
export async function logout() {
  const form = new URLSearchParams({ csrfmiddlewaretoken: pageParams.csrf_token || "" });
  try {
    await fetch("/accounts/logout/", {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": pageParams.csrf_token || "" },
      body: form,
    });
  } finally {
    window.location.href = "/login/";
  }
}
