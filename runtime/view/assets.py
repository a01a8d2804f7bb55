"""The report page's style sheet and script, inline in the page (nothing is fetched when it is viewed).

The script fills shared fragments into a question's details when they open, filters the rows (by the
selects, and by free text over a row's cells), sorts them by a clicked heading (numbers as numbers,
each question's open details moving with it), and opens the question a link names (`#q-<id>`).
"""

STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:1400px}
h1{font-size:1.4em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}h4{margin:.8em 0 .3em}
table{border-collapse:collapse;font-size:13px}td,th{padding:2px 6px;border-bottom:1px solid #eee;text-align:left;
vertical-align:top}.num,.n{text-align:right;white-space:nowrap}.charts{display:flex;flex-wrap:wrap;gap:1em}
svg.chart .grid{stroke:#ddd}svg.chart .tick,svg.chart .group{font-size:10px;fill:#444}svg.chart .ci{stroke:#000;
stroke-width:1.2;fill:none}.legend span{margin-right:1em;white-space:nowrap}
.filters{margin:.5em 0;display:flex;gap:1em;flex-wrap:wrap;align-items:center}
#question-table td.right{background:#d8f0d8}#question-table td.wrong{background:#f6d5d5}
#question-table td.partly-right{background:#fbeec8}#question-table td.not-asked{background:#eee}
#question-table td.failed{background:#e1d5f6}th.sortable{cursor:pointer;white-space:nowrap}
th.sortable[data-order=ascending]::after{content:" \\25b2"}th.sortable[data-order=descending]::after{content:" \\25bc"}
td.text{max-width:420px}button.open{width:2em}tr.details>td{background:#fafafa;padding:.5em 1em;max-width:0}
tr.question:target>td{outline:2px solid #0072b2}
pre{margin:2px 0;padding:3px 6px;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere}
pre.block{border-left:3px solid #ddd}
pre.evidence{background:#fff6c4;border-left-color:#e0a800}pre.legend{color:#666}.score,.note{color:#666;margin-left:1em}
td.prediction.failed{color:#5e35b1}details.sent{margin:.3em 0}details.sent summary{cursor:pointer}
.outside{color:#b00020;font-weight:600}.figure-scroll{overflow:auto;max-width:100%;max-height:70vh}
.small-n{color:#b26a00;cursor:help}
svg.rooms line.edge{stroke:#999;stroke-width:1.2}svg.rooms line.path{stroke:#d81b60;stroke-width:3}
svg.rooms rect{fill:#fff;stroke:#666}svg.rooms .here rect{fill:#bbdefb;stroke:#0d47a1}
svg.rooms .target rect{fill:#ffe082;stroke:#b28900}svg.rooms .on-path rect{stroke:#d81b60}
svg.rooms text{font-size:11px}.screens{display:flex;flex-wrap:wrap;gap:6px}
figure.screen img{image-rendering:pixelated;display:block}figure.screen figcaption{font-weight:400;font-size:12px}
figure{margin:0}figcaption{font-size:13px;font-weight:600}.none{color:#777;font-style:italic}
"""

SCRIPT = """
(function () {
  const table = document.getElementById('question-table');
  const body = table.tBodies[0];
  const rows = Array.from(body.querySelectorAll('tr.question'));
  const selects = Array.from(document.querySelectorAll('select[data-filter]'));
  const search = document.getElementById('search');
  const runCells = Array.from(table.querySelectorAll('[data-run]'));
  function fill(root) {
    root.querySelectorAll('div.fragment').forEach(function (slot) {
      const source = document.getElementById(slot.dataset.fragment);
      slot.replaceWith(source.content.cloneNode(true));
    });
  }
  function detailsOf(row) {
    const next = row.nextElementSibling;
    return next && next.classList.contains('details') ? next : null;
  }
  function value(name) {
    return selects.find(function (s) { return s.dataset.filter === name; }).value;
  }
  function applyFilters() {
    const model = value('model'), result = value('result');
    const text = search.value.trim().toLowerCase();
    let shown = 0;
    rows.forEach(function (row) {
      const results = row.dataset.results.split('|');
      let keep = ['category', 'template', 'game'].every(function (name) {
        return !value(name) || row.dataset[name] === value(name);
      });
      if (result) {
        keep = keep && (model ? results[Number(model)] === result : results.indexOf(result) >= 0);
      }
      if (text) { keep = keep && row.textContent.toLowerCase().indexOf(text) >= 0; }
      row.hidden = !keep;
      const details = detailsOf(row);
      if (details) { details.hidden = !keep; }
      if (keep) { shown += 1; }
    });
    runCells.forEach(function (cell) { cell.hidden = Boolean(model) && cell.dataset.run !== model; });
    document.getElementById('shown').textContent = shown + ' of ' + rows.length + ' questions';
  }
  function toggle(row, open) {
    const details = detailsOf(row);
    const button = row.querySelector('button.open');
    if (details && open !== true) {
      details.remove();
      button.textContent = '+';
      button.setAttribute('aria-expanded', 'false');
      return;
    }
    if (details || open === false) { return; }
    const added = document.createElement('tr');
    added.className = 'details';
    const cell = document.createElement('td');
    cell.colSpan = row.children.length;
    cell.appendChild(document.getElementById(row.dataset.details).content.cloneNode(true));
    fill(cell);
    added.appendChild(cell);
    row.after(added);
    button.textContent = '\\u2212';
    button.setAttribute('aria-expanded', 'true');
  }
  rows.forEach(function (row) {
    row.querySelector('button.open').addEventListener('click', function () { toggle(row); });
  });
  function key(row, column) {
    const text = row.children[column].textContent.trim();
    const number = Number(text);
    return text !== '' && !isNaN(number) ? [0, number, ''] : [1, 0, text.toLowerCase()];
  }
  table.querySelectorAll('th.sortable').forEach(function (heading) {
    heading.addEventListener('click', function () {
      const column = Array.from(heading.parentNode.children).indexOf(heading);
      const order = heading.dataset.order === 'ascending' ? 'descending' : 'ascending';
      table.querySelectorAll('th.sortable').forEach(function (h) { delete h.dataset.order; });
      heading.dataset.order = order;
      const sign = order === 'ascending' ? 1 : -1;
      const sorted = rows.slice().sort(function (a, b) {
        const x = key(a, column), y = key(b, column);
        for (let i = 0; i < 3; i += 1) {
          if (x[i] < y[i]) { return -sign; }
          if (x[i] > y[i]) { return sign; }
        }
        return 0;
      });
      sorted.forEach(function (row) {
        const details = detailsOf(row);
        body.appendChild(row);
        if (details) { body.appendChild(details); }
      });
    });
  });
  function openLinked() {
    const id = decodeURIComponent(location.hash.slice(1));
    const row = id && document.getElementById(id);
    if (!row || !row.classList.contains('question')) { return; }
    selects.forEach(function (s) { s.value = ''; });
    search.value = '';
    applyFilters();
    toggle(row, true);
    row.scrollIntoView();
  }
  selects.forEach(function (s) { s.addEventListener('change', applyFilters); });
  search.addEventListener('input', applyFilters);
  window.addEventListener('hashchange', openLinked);
  applyFilters();
  openLinked();
})();
"""
