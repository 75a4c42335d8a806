// Windowed list: only the rows in view (plus a margin) exist in the DOM,
// positioned in a spacer as tall as all rows, so 100,000 items or 50,000
// problems cost the same to scroll as 50. Rows have one fixed height and
// are placed by transform, each contained (style.css: contain), so a
// row drawn or filled in never lays out the others; the columns are a
// CSS grid shared with the header row. Rows whose data arrives are
// filled in place (updateRow) when the page can, not removed and made
// again.
import { h, clear } from './dom.js';

export class VList {
  // opts: {rowHeight, columns (grid-template-columns), header: [labels],
  //        renderRow(i) -> Element, onRange(start, end) (rows in view),
  //        updateRow(i, el) (optional: fill row i's element in place),
  //        rangeEachFrame (onRange at most once a frame instead of
  //        every 100 ms: the page drops superseded requests itself)}
  constructor(opts) {
    this.o = Object.assign({ rowHeight: 28, overscan: 10 }, opts);
    this.count = 0;
    this.header = h('div', { class: 'vrow vhead', role: 'row' },
      this.o.header.map((c) => h('div', { class: 'vcell', role: 'columnheader' }, c)));
    this.header.style.gridTemplateColumns = this.o.columns;
    this.spacer = h('div', { class: 'vspacer' });
    this.viewport = h('div', { class: 'vviewport', role: 'rowgroup', tabindex: 0 }, this.spacer);
    this.el = h('div', { class: 'vlist', role: 'table' }, this.header, this.viewport);
    this.shown = new Map(); // index -> element
    this.pending = false;
    this.viewport.addEventListener('scroll', () => this.schedule(), { passive: true });
    this.ro = new ResizeObserver(() => this.schedule());
    this.ro.observe(this.viewport);
  }

  // setCount sets the number of rows and redraws from the top.
  setCount(n, keepScroll) {
    this.count = n;
    this.spacer.style.height = `${n * this.o.rowHeight}px`;
    if (!keepScroll) this.viewport.scrollTop = 0;
    this.refresh();
  }

  // refresh re-renders the rows in view (data changed). Rows that can
  // be filled in place (opts.updateRow) are kept and refilled, not made
  // again: a filter's first paint sets text in the rows already there.
  refresh() {
    if (this.o.updateRow) {
      this.spare = [...this.shown.values()];
    } else {
      for (const el of this.shown.values()) el.remove();
    }
    this.shown.clear();
    // Same range, other rows: onRange must hear of it again.
    this.firedRange = null;
    this.render();
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.render();
    });
  }

  range() {
    const rh = this.o.rowHeight;
    const top = this.viewport.scrollTop;
    const height = this.viewport.clientHeight || 600;
    const start = Math.max(0, Math.floor(top / rh) - this.o.overscan);
    const end = Math.min(this.count, Math.ceil((top + height) / rh) + this.o.overscan);
    return [start, end];
  }

  render() {
    const [start, end] = this.range();
    // Rows scrolled out are reused for rows scrolled in when the page
    // can fill a row in place (opts.updateRow): the element stays in the
    // DOM and only moves and changes text.
    const free = this.spare || [];
    this.spare = null;
    for (const [i, el] of this.shown) {
      if (i < start || i >= end) {
        this.shown.delete(i);
        free.push(el);
      }
    }
    for (let i = start; i < end; i++) {
      if (this.shown.has(i)) continue;
      let row = this.o.updateRow ? free.pop() : undefined;
      if (row) {
        this.o.updateRow(i, row);
      } else {
        row = this.o.renderRow(i);
        row.classList.add('vrow');
        row.setAttribute('role', 'row');
        row.style.gridTemplateColumns = this.o.columns;
        row.style.height = `${this.o.rowHeight}px`;
        this.spacer.appendChild(row);
      }
      row.style.transform = `translateY(${i * this.o.rowHeight}px)`;
      this.shown.set(i, row);
    }
    for (const el of free) el.remove();
    if (this.o.onRange) this.rangeChanged(start, end);
  }

  // rangeChanged tells onRange the rows in view at most every 100 ms
  // (first call at once, last call always): a fast scroll through 50,000
  // rows asks the server for the rows it stops at, not for every screen
  // it passes.
  rangeChanged(start, end) {
    if (this.o.rangeEachFrame) {
      // render runs once a frame (schedule): one call a frame at most.
      if (this.firedRange !== start + ':' + end) {
        this.firedRange = start + ':' + end;
        this.o.onRange(start, end);
      }
      return;
    }
    this.lastRange = [start, end];
    if (this.rangeTimer) return;
    const fire = () => {
      const [s, e] = this.lastRange;
      this.firedRange = s + ':' + e;
      this.o.onRange(s, e);
    };
    if (this.firedRange !== start + ':' + end) fire();
    this.rangeTimer = setTimeout(() => {
      this.rangeTimer = 0;
      const [s, e] = this.lastRange;
      if (this.firedRange !== s + ':' + e) fire();
    }, 100);
  }

  // replaceRow re-renders one row if it is in view (its data arrived).
  replaceRow(i) {
    this.replaceRows((j) => j === i);
  }

  // replaceRows re-renders the rows in view that want(index) picks, in
  // one pass: a screenful of details costs one render, not one each.
  replaceRows(want) {
    let any = false;
    for (const [i, el] of this.shown) {
      if (!want(i)) continue;
      el.remove();
      this.shown.delete(i);
      any = true;
    }
    if (any) this.render();
  }

  // updateRows fills the rows in view that want(index) picks in place
  // (opts.updateRow), or re-renders them without it.
  updateRows(want) {
    if (!this.o.updateRow) {
      this.replaceRows(want);
      return;
    }
    for (const [i, el] of this.shown) {
      if (i < this.count && want(i)) this.o.updateRow(i, el);
    }
  }

  destroy() {
    clearTimeout(this.rangeTimer);
    this.ro.disconnect();
    clear(this.el);
  }
}

// cells builds a row's cells (each a div.vcell) from values or elements.
export function cells(...cs) {
  return cs.map((c) => (c instanceof Node && c.classList && c.classList.contains('vcell') ? c : h('div', { class: 'vcell' }, c)));
}
