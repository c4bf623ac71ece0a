// Next/Previous links over an API list's opaque cursors. The current cursor
// and the stack of earlier ones live in the fragment, so both links are
// plain links (reload, bookmark, open in a new tab all work).

import { href, popCursor, pushCursor, splitStack, val } from "./state.js";

// setPager updates the links of one list. prefix is the section's state
// prefix ("e.", "j."); next is the "next" cursor of the page shown.
export function setPager(p, prefix, ids, next) {
  const cursor = val(p, prefix + "cursor");
  const stack = val(p, prefix + "prev");
  const page = splitStack(stack).length + 1;
  document.getElementById(ids.page).textContent = String(page);
  const nextLink = document.getElementById(ids.next);
  const prevLink = document.getElementById(ids.prev);
  if (next) {
    nextLink.href = href({ [prefix + "cursor"]: next, [prefix + "prev"]: pushCursor(stack, cursor) });
    nextLink.hidden = false;
  } else {
    nextLink.removeAttribute("href");
    nextLink.hidden = true;
  }
  if (page > 1) {
    const back = popCursor(stack);
    prevLink.href = href({ [prefix + "cursor"]: back.cursor || null, [prefix + "prev"]: back.stack || null });
    prevLink.hidden = false;
  } else {
    prevLink.removeAttribute("href");
    prevLink.hidden = true;
  }
}

// hidePager hides both links (while loading or after an error).
export function hidePager(ids) {
  for (const id of [ids.next, ids.prev]) {
    const a = document.getElementById(id);
    a.hidden = true;
    a.removeAttribute("href");
  }
}
