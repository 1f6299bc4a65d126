// complexir leaderboard: renders window.LEADERBOARD (data.js, the same data as leaderboard.json) as a table with a
// view and a measure switch and sortable columns. Text goes in through textContent only, never as HTML.
"use strict";

(function () {
  const data = window.LEADERBOARD;
  const viewSelect = document.getElementById("view");
  const measureSelect = document.getElementById("measure");
  const head = document.querySelector("#board thead tr");
  const body = document.querySelector("#board tbody");
  const note = document.getElementById("view-note");
  const state = { view: null, measure: null, sortKey: "rank", ascending: true };

  // key, header, cell class, value to sort on
  const columns = [
    { key: "rank", label: "Rank", value: (r) => r.rank },
    { key: "system", label: "System", value: (r) => r.system.toLowerCase() },
    { key: "mean", label: null, value: (r) => r.mean },
    { key: "ci", label: "95% interval", value: (r) => (r.ci95 ? r.ci95[0] : null) },
    { key: "beats", label: "Significantly better than", value: (r) => r.beats.length },
    { key: "data", label: "Data revision", value: (r) => r.data_revision },
    { key: "source", label: "Source", value: (r) => r.source },
    { key: "note", label: "Note", value: (r) => r.note },
  ];

  function fmt(x) {
    return x === null || x === undefined ? "–" : Number(x).toFixed(4);
  }

  function measureLabel(measure) {
    return data.measure_labels[measure] || measure;
  }

  function fillViews() {
    const groups = new Map();
    for (const view of data.views) {
      if (!groups.has(view.benchmark)) {
        const group = document.createElement("optgroup");
        group.label = view.benchmark;
        groups.set(view.benchmark, group);
        viewSelect.appendChild(group);
      }
      const option = document.createElement("option");
      option.value = view.id;
      option.textContent = view.label;
      groups.get(view.benchmark).appendChild(option);
    }
    state.view = data.views.length ? data.views[0].id : null;
  }

  function fillMeasures() {
    const view = data.views.find((v) => v.id === state.view);
    measureSelect.replaceChildren();
    for (const measure of view.measures) {
      const option = document.createElement("option");
      option.value = measure;
      option.textContent = measureLabel(measure);
      measureSelect.appendChild(option);
    }
    if (!view.measures.includes(state.measure)) state.measure = view.measures[0];
    measureSelect.value = state.measure;
    note.textContent = view.kind === "benchmark"
      ? "The mean over the benchmark's tasks (a task's score the mean of its subsets): " + view.tasks.join(", ") + "."
      : view.kind === "hub"
        ? "As the Hub's leaderboard ranks the models: numbers only, no interval or test; the note lists each " +
          "model's values per task from its .eval_results."
        : view.kind === "hub-task"
          ? "The value each model's .eval_results gives for this task on the Hub: numbers only, not ranked."
          : "";
  }

  function compare(a, b) {
    const column = columns.find((c) => c.key === state.sortKey);
    const x = column.value(a);
    const y = column.value(b);
    const missingX = x === null || x === undefined || x === "";
    const missingY = y === null || y === undefined || y === "";
    if (missingX !== missingY) return missingX - missingY; // rows without a value last, either way
    const order = missingX ? 0
      : typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    if (order !== 0) return state.ascending ? order : -order;
    return (b.mean ?? -Infinity) - (a.mean ?? -Infinity); // ties: the higher mean first
  }

  function renderHead() {
    head.replaceChildren();
    for (const column of columns) {
      const th = document.createElement("th");
      th.dataset.key = column.key;
      th.textContent = column.label || measureLabel(state.measure);
      th.setAttribute("aria-sort", column.key === state.sortKey ? (state.ascending ? "ascending" : "descending") : "none");
      th.addEventListener("click", () => {
        if (state.sortKey === column.key) {
          state.ascending = !state.ascending;
        } else {
          state.sortKey = column.key;
          state.ascending = !["mean", "ci", "beats"].includes(column.key); // best first
        }
        render();
      });
      head.appendChild(th);
    }
  }

  function cell(tr, key, text) {
    const td = document.createElement("td");
    td.className = key;
    td.textContent = text;
    tr.appendChild(td);
    return td;
  }

  function render() {
    renderHead();
    const rows = data.rows.filter((r) => r.view === state.view && r.measure === state.measure);
    rows.sort(compare);
    body.replaceChildren();
    for (const row of rows) {
      const tr = document.createElement("tr");
      tr.className = row.source;
      tr.dataset.system = row.system;
      cell(tr, "rank", row.rank === null ? "–" : String(row.rank));
      const system = cell(tr, "system", "");
      if (row.model_url) {
        const link = document.createElement("a");
        link.href = row.model_url;
        link.textContent = row.system;
        system.appendChild(link);
      } else {
        system.appendChild(document.createTextNode(row.system));
      }
      if (row.demo) {
        const badge = document.createElement("span");
        badge.className = "badge demo";
        badge.textContent = "DEMO";
        system.appendChild(badge);
      }
      cell(tr, "mean", fmt(row.mean));
      cell(tr, "ci", row.ci95 ? "[" + fmt(row.ci95[0]) + ", " + fmt(row.ci95[1]) + "]" : "–");
      cell(tr, "beats", row.beats.join(", "));
      cell(tr, "data", row.data_revision || "–");
      cell(tr, "source", data.sources[row.source] || row.source);
      const noted = cell(tr, "note", row.note || "");
      if (row.citation) noted.title = row.citation;
      body.appendChild(tr);
    }
  }

  // The view and measure shown live in the address (#view=...&measure=...), so that a link shows the same table.
  function remember() {
    history.replaceState(null, "", "#" + new URLSearchParams({ view: state.view, measure: state.measure }));
  }

  function recall() {
    const wanted = new URLSearchParams(location.hash.slice(1));
    if (data.views.some((v) => v.id === wanted.get("view"))) state.view = wanted.get("view");
    state.measure = wanted.get("measure");
  }

  viewSelect.addEventListener("change", () => {
    state.view = viewSelect.value;
    fillMeasures();
    render();
    remember();
  });
  measureSelect.addEventListener("change", () => {
    state.measure = measureSelect.value;
    render();
    remember();
  });

  document.getElementById("demo-banner").hidden = !data.demo;
  fillViews();
  recall();
  if (state.view !== null) {
    viewSelect.value = state.view;
    fillMeasures();
    render();
  }
})();
