// Added by tests/e2e/test_reports.py to a copy of a report (the report runs no script: its CSP forbids
// one). After layout it lists, as JSON in a pre element (id overflow-probe) that `chromium --dump-dom`
// reads back: the page wider than the window; any element that runs past its parent's edge or hides
// part of its content behind a scroll bar (a table column cut off); any chart label outside its chart.
addEventListener("load", () => {
  const out = [];
  const name = (el) => {
    const cls = typeof el.className === "string" && el.className.trim() ? "." + el.className.trim().split(/\s+/).join(".") : "";
    return `${el.tagName.toLowerCase()}${cls} "${(el.textContent || "").trim().slice(0, 40)}"`;
  };
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth + 1)
    out.push(`the page is ${root.scrollWidth} px wide in a ${root.clientWidth} px window`);
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest("svg")) continue;  // chart contents: their labels are checked against the viewBox below
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== "visible")
      out.push(`${name(el)} hides ${el.scrollWidth - el.clientWidth} px of its content`);
    const r = el.getBoundingClientRect(), p = el.parentElement.getBoundingClientRect();
    const past = Math.max(r.right - p.right, p.left - r.left);
    if (r.width && past > 1) out.push(`${name(el)} runs ${Math.round(past)} px past ${name(el.parentElement)}`);
  }
  for (const svg of document.querySelectorAll("svg")) {
    const box = svg.viewBox.baseVal;
    for (const t of svg.querySelectorAll("text")) {
      const b = t.getBBox();
      if (b.x < box.x - 0.5 || b.x + b.width > box.x + box.width + 0.5)
        out.push(`label "${t.textContent}" of chart "${svg.getAttribute("aria-label")}" spans ` +
                 `${Math.round(b.x)} to ${Math.round(b.x + b.width)} of 0 to ${box.width}`);
    }
  }
  const pre = document.createElement("pre");
  pre.id = "overflow-probe";
  pre.textContent = JSON.stringify(out);
  document.body.append(pre);
});
