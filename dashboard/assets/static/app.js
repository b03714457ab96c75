// Copy buttons: <button class="copy" data-copy="ID"> copies the text of #ID.
// The only script of the dashboard; every page works without it.
document.addEventListener("click", (e) => {
  const b = e.target.closest("button.copy");
  if (!b) return;
  const el = document.getElementById(b.dataset.copy);
  if (!el || !navigator.clipboard) return;
  navigator.clipboard.writeText(el.textContent).then(() => { b.textContent = "Copied"; });
});
