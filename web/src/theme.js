/** The colour scheme setting (`color_scheme`: 1 automatic, 2 dark, 3 light) as `data-theme` on <html>;
 * "automatic" leaves it to the system's preference (a CSS media query). */
export function applyTheme(scheme) {
  const root = document.documentElement;
  if (scheme === 2) root.dataset.theme = "dark";
  else if (scheme === 3) root.dataset.theme = "light";
  else delete root.dataset.theme;
}
