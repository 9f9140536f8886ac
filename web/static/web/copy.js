// Copy buttons: <button data-copy="element-id">. A static file, so pages need no inline script.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("[data-copy]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  const text = source.value ?? source.textContent;
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    source.select?.();
    button.textContent = "Press Ctrl+C";
  }
});
