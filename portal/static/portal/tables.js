/* Sortable tables: a click on a column heading of a table.sortable sorts its rows by that
 * column, again reverses. A cell's data-value is what it sorts by (numbers for headings with
 * data-type="number"), else its text. A heat map's cell is coloured by its data-heat level (0 to 1),
 * set here as the --heat property: the Content-Security-Policy allows no style attribute. */
(function () {
  "use strict";

  function key(row, index, numeric) {
    const cell = row.cells[index];
    if (!cell) return numeric ? -Infinity : "";
    const raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim();
    if (!numeric) return raw.toLowerCase();
    const value = parseFloat(raw);
    return Number.isNaN(value) ? -Infinity : value;
  }

  function sortBy(table, heading) {
    const index = Array.from(heading.parentElement.children).indexOf(heading);
    const numeric = heading.dataset.type === "number";
    const ascending = heading.getAttribute("aria-sort") !== "ascending";
    const body = table.tBodies[0];
    const rows = Array.from(body.rows);
    rows.sort((a, b) => {
      const x = key(a, index, numeric);
      const y = key(b, index, numeric);
      return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1);
    });
    rows.forEach((row) => body.appendChild(row));
    table.querySelectorAll("th[aria-sort]").forEach((th) => th.removeAttribute("aria-sort"));
    heading.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }

  function start() {
    document.querySelectorAll("[data-heat]").forEach((cell) => cell.style.setProperty("--heat", cell.dataset.heat));
    document.querySelectorAll("table.sortable").forEach((table) => {
      table.querySelectorAll("thead th").forEach((heading) => {
        heading.tabIndex = 0;
        heading.title = "sort by this column";
        heading.addEventListener("click", () => sortBy(table, heading));
        heading.addEventListener("keydown", (event) => {
          if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(table, heading); }
        });
      });
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
