// Placeholder until the web client's build (web/src, esbuild) replaces web/dist/.
const app = document.getElementById("app");
if (app) app.textContent = "Loading…";
