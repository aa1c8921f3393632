(function () {
  "use strict";
  // Legend buttons hide or show one failure class in the timeline.
  document.querySelectorAll("[data-toggle-series]").forEach(function (button) {
    button.addEventListener("click", function () {
      var series = button.getAttribute("data-toggle-series");
      var show = button.getAttribute("aria-pressed") === "false";
      button.setAttribute("aria-pressed", show ? "true" : "false");
      document.querySelectorAll("#timeline [data-series]").forEach(function (el) {
        if (el.getAttribute("data-series") === series) { el.style.display = show ? "" : "none"; }
      });
    });
  });
  // Click a column header to sort; numeric cells carry their value in data-v.
  function key(cell, numeric) {
    if (numeric) { var v = parseFloat(cell.getAttribute("data-v")); return isNaN(v) ? -Infinity : v; }
    return cell.textContent;
  }
  function sortBy(table, column, th) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var numeric = th.classList.contains("n");
    var dir = th.getAttribute("aria-sort") === "descending" ? 1 : -1;
    if (!numeric) { dir = -dir; }
    Array.prototype.forEach.call(th.parentNode.cells, function (c) { c.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", (numeric ? dir === 1 : dir === -1) ? "ascending" : "descending");
    rows.sort(function (a, b) {
      var x = key(a.cells[column], numeric), y = key(b.cells[column], numeric);
      return x < y ? -dir : x > y ? dir : 0;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    if (!table.tHead || !table.tBodies.length) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortBy(table, column, th); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sortBy(table, column, th); } });
    });
  });
  document.documentElement.setAttribute("data-rendered", "yes");
})();
