// The cause diagram's boxes show a shortened name; this writes the full one (each box's
// aria-label, also its <title> tooltip) under the diagram when a box is hovered or
// reached with Tab. Without script the tooltip and the list beside the diagram remain.
document.addEventListener("DOMContentLoaded", () => {
  const caption = document.getElementById("cause-focus");
  const svg = document.querySelector("svg.cause-diagram");
  if (!caption || !svg) return;
  const show = (event) => {
    const node = event.target.closest(".cause-node");
    if (node) caption.textContent = node.getAttribute("aria-label");
  };
  svg.addEventListener("focusin", show);
  svg.addEventListener("mouseover", show);
});
