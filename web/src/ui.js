/** The UI library in one place: Preact with hooks and htm (tagged templates instead of JSX, so no
 * JSX transform is needed and the sources run unbundled too). Vendored under web/vendor/. */
import { h, render, Fragment } from "../vendor/preact/preact.mjs";
import htm from "../vendor/htm/htm.mjs";

export { h, render, Fragment };
export {
  useState,
  useEffect,
  useRef,
  useMemo,
  useCallback,
  useLayoutEffect,
} from "../vendor/preact/hooks.mjs";
export const html = htm.bind(h);
