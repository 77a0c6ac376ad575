// Bundles web/src into web/dist/app.js + app.css (committed; the server embeds web/dist).
// Deterministic output (no timestamps, no source maps) so CI can check dist/ is up to date.
import * as esbuild from "esbuild";

const options = {
  entryPoints: { app: "src/main.js" },
  bundle: true,
  format: "esm",
  target: ["es2020"],
  minify: true,
  legalComments: "eof",
  outdir: "dist",
  loader: { ".svg": "file" },
  assetNames: "[name]",
  logLevel: "info",
};

if (process.argv.includes("--watch")) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  await esbuild.build(options);
}
