// Tables marked `stack-sm` become one block per row on a phone (site.css), each cell led by
// its column's name: that name is the cell's data-label, taken here from the table's header
// so that no template writes every column's name twice. A cell that has its own data-label
// keeps it; a column whose header is only for screen readers (the actions) gets none.
(() => {
  const shownName = (th) => {
    const seen = th.cloneNode(true);
    seen.querySelectorAll(".visually-hidden").forEach((hidden) => hidden.remove());
    return seen.textContent.trim() ? th.textContent.trim().replace(/\s+/g, " ") : "";
  };
  const label = (table) => {
    const names = [...table.querySelectorAll(":scope > thead > tr > th")].map(shownName);
    for (const row of table.querySelectorAll(":scope > tbody > tr")) {
      let column = 0;
      for (const cell of row.children) {
        if (!cell.hasAttribute("data-label") && names[column]) {
          cell.setAttribute("data-label", names[column]);
        }
        column += cell.colSpan || 1;
      }
    }
  };
  const all = () => document.querySelectorAll("table.stack-sm").forEach(label);
  document.addEventListener("DOMContentLoaded", all);
  document.addEventListener("htmx:afterSettle", all);  // rows swapped in later
})();
