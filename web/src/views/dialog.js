/** A modal built on <dialog> (focus trapping, Esc and the backdrop come from the browser). */
import { html, useEffect, useRef } from "../ui.js";

export function Dialog({ title, onClose, children, wide }) {
  const ref = useRef(null);
  useEffect(() => {
    const el = ref.current;
    if (el && !el.open) el.showModal();
    const onCancel = (e) => {
      e.preventDefault();
      onClose();
    };
    el.addEventListener("cancel", onCancel);
    return () => el.removeEventListener("cancel", onCancel);
  }, []);
  return html`
    <dialog ref=${ref} class=${wide ? "wide" : ""} aria-labelledby="dialog-title">
      <div class="dialog-head">
        <h2 id="dialog-title">${title}</h2>
        <button type="button" class="icon-button" aria-label="Close" onClick=${onClose}>✕</button>
      </div>
      ${children}
    </dialog>`;
}
