// Sorting and filtering of the items table. The rows carry what is sorted and filtered on as
// data- attributes (data-row: the line number; data-score-N: scorer N's exact score;
// data-label-N: label column N, 0 or 1; data-disagree: the scorers that disagree with the
// label). Without script the page is the same, unsorted and unfiltered.
"use strict";
(function () {
  var table = document.getElementById("items-table");
  if (!table) return;
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var review = document.getElementById("review");
  var onlyDisagreements = document.getElementById("only-disagreements");
  var byScorer = document.getElementById("filter-scorer");
  var byLabel = document.getElementById("filter-label");
  var shown = document.getElementById("shown");

  function number(row, key) {
    var value = row.getAttribute("data-" + key);
    return value === null || value === "" ? null : Number(value);
  }

  function sortBy(header) {
    var key = header.getAttribute("data-sort");
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(table.querySelectorAll("th[aria-sort]"), function (th) {
      th.removeAttribute("aria-sort");
    });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    rows.slice().sort(function (a, b) {
      var x = number(a, key);
      var y = number(b, key);
      // Rows without a value (not scored, not labelled) go last either way; ties keep
      // the file's order.
      if (x === null || y === null || x === y) {
        return (x === null) - (y === null) || number(a, "row") - number(b, "row");
      }
      return ascending ? x - y : y - x;
    }).forEach(function (row) {
      body.appendChild(row);
    });
  }

  function filter() {
    var scorer = byScorer ? byScorer.value : "";
    var label = byLabel ? byLabel.value.split(":") : [""];
    var count = 0;
    rows.forEach(function (row) {
      var marks = (row.getAttribute("data-disagree") || "").split(" ").filter(Boolean);
      var visible =
        (scorer === "" || row.hasAttribute("data-score-" + scorer)) &&
        (!onlyDisagreements || !onlyDisagreements.checked ||
          (scorer === "" ? marks.length > 0 : marks.indexOf(scorer) >= 0)) &&
        (label[0] === "" || (row.getAttribute("data-label-" + label[0]) || "") === label[1]);
      row.hidden = !visible;
      if (visible) count += 1;
    });
    shown.textContent = count + " of " + rows.length + " items shown";
  }

  Array.prototype.forEach.call(table.querySelectorAll("th[data-sort]"), function (header) {
    var button = document.createElement("button");
    button.type = "button";
    button.title = "Sort by " + header.textContent.trim();
    while (header.firstChild) button.appendChild(header.firstChild);
    header.appendChild(button);
    button.addEventListener("click", function () {
      sortBy(header);
    });
  });
  [onlyDisagreements, byScorer, byLabel].forEach(function (control) {
    if (control) control.addEventListener("change", filter);
  });
  if (review) {
    review.hidden = false;
    filter();
  }
})();
