// The render scheduler (layer: web): draws the panels from (trace, state) within a frame budget, the panels on
// screen first, a long one in slices, the rest when the page is idle or as they scroll near; a newer render
// abandons an older one. It is the only writer of the marks tests wait on:
//   html[data-busy]     a run is due or computing, or the newest render still has panels to draw
//   html[data-drawing]  a render has panels still to draw (off screen ones are drawn when idle)
//   html[data-shown]    the newest render's panels on screen are drawn (its number)
//   html[data-drawn]    every panel of that render is drawn (its number)
//   html[data-redraw]   a redraw is due (a resize's, 150 ms later)
// Panels are adapters { id, box?, shows?, needs, key?, draw, update? } (web/panels/): `id` the section's id,
// `box` the element whose width the draw uses, `shows(ctx)` false to leave it out of this render, `needs(ctx)`
// what of the trace it draws ('all' every layer's weights, 'full' the shown layer in full, 'layer' the shown
// layer's weights), `key(ctx)` everything its picture depends on (null: drawn every time), `draw(ctx)` → null
// when done or a function drawing the next slice, `update(ctx)` when the key has not changed (moves a selection).
import { whenIdle } from './dom.js';

/** Above or below the viewport by more than this many viewport heights: drawn later. */
export const NEAR = 0.5;
const BUDGET = 12; // ms of drawing per task before the next panel waits for the next frame

/** Whether `el` is in the viewport, or within `margin` viewport heights of it (a hidden one counts: 0 × 0). */
export function onScreen(el, margin = 0) {
  const vh = window.innerHeight;
  const r = el.getBoundingClientRect();
  return r.height === 0 || (r.bottom > -margin * vh && r.top < (1 + margin) * vh);
}

/** The width a panel draws at: its box's, at least 240 px. */
export const widthOf = (id) => Math.max(240, document.getElementById(id).clientWidth);

const marks = document.documentElement.dataset;

/**
 * `panels` in page order; `hooks`:
 *   context()        → the render's context: { trace, state, runs, … } (widths are added here), or null: nothing to draw
 *   prepare(ctx)     before the panels, once the widths are read (what the whole page shows for this trace)
 *   has(ctx, what)   whether the context's trace holds `what` ('all' | 'full' | 'layer')
 *   complete()       asks for the trace's missing parts (drawn when they come: the caller renders again)
 *   computing()      a run is due or computing (busy stays set)
 *   newer()          a newer input is on its way (idle drawing waits: its trace replaces this one)
 */
export function createScheduler(panels, hooks) {
  const byId = new Map(panels.map((p) => [p.id, p]));
  const keys = new Map(); // panel id → the key of what it shows
  let gen = 0;
  let open = false; // the newest render still has panels to draw
  let deferred = null; // the newest render's panels put off: { later: Map(id → draw), run(id), fail() }
  let last = null; // the newest render's context

  const needsOf = (ctx, id) => byId.get(id)?.needs(ctx) ?? [];
  const ready = (ctx, id) => needsOf(ctx, id).every((what) => hooks.has(ctx, what));

  /** One panel's draw in this render: skipped (update only) when its key is unchanged; a sliced one keyed when whole. */
  function stage(p, ctx) {
    const key = p.key ? p.key(ctx) : null;
    if (key !== null && keys.get(p.id) === key) {
      p.update?.(ctx);
      return null;
    }
    keys.delete(p.id);
    let rest = p.draw(ctx);
    const more = () => {
      if (rest) return () => { rest = rest(); return more(); };
      if (key !== null) keys.set(p.id, key);
      return null;
    };
    return more();
  }

  /** Draws every panel (see the file's comment); `done(ms)` gets the main-thread time spent when it ends. */
  function render(done) {
    const ctx = hooks.context();
    if (!ctx) return;
    const g = ++gen;
    open = true;
    marks.drawing = '1'; // until every panel of this render is drawn (or a newer one starts)
    delete marks.redraw;
    last = ctx;
    // widths first: reading layout after the first replace would force a layout per panel
    ctx.width = Object.fromEntries(panels.filter((p) => p.box).map((p) => [p.box, widthOf(p.box)]));
    hooks.prepare(ctx);
    const stages = panels.filter((p) => !p.shows || p.shows(ctx)).map((p) => [p.id, () => stage(p, ctx)]);
    // on screen, or hidden (a hidden panel's draw decides whether it shows, and costs nothing); those near it are
    // drawn as they scroll in. The first trace's attention maps are drawn right after the tokens, on screen or not:
    // what the page is for, and on a cold load each frame's first layout is slow (~100 ms)
    const near = (id) => onScreen(document.getElementById(id));
    const first = stages.filter(([id]) => (near(id) || (ctx.runs === 0 && id === 'panel-attention')) && ready(ctx, id));
    const k = ctx.runs === 0 ? first.findIndex(([id]) => id === 'panel-attention') : -1;
    if (k > 1) first.splice(1, 0, ...first.splice(k, 1));
    const later = new Map(stages.filter((st) => !first.includes(st)));
    let spent = 0;
    let ended = false;
    const run = (draw) => {
      const t0 = performance.now();
      const rest = draw();
      spent += performance.now() - t0;
      return typeof rest === 'function' ? rest : null;
    };
    const end = (complete) => {
      if (ended) return;
      ended = true;
      if (complete) {
        open = false;
        delete marks.drawing;
        marks.drawn = String(g); // every panel is drawn (tests wait on this)
        if (!hooks.computing()) delete marks.busy;
      }
      done?.(spent); // superseded: the newer render draws the rest
    };
    const d = {
      later,
      run(id) {
        if (g !== gen) return end(false);
        const draw = later.get(id);
        if (!draw) return;
        if (!ready(ctx, id)) {
          hooks.complete(); // the pump draws it when the completion has come
          return;
        }
        later.delete(id);
        const rest = run(draw);
        if (rest) { // its next slice goes first
          const others = [...later];
          later.clear();
          later.set(id, rest);
          for (const [i, v] of others) later.set(i, v);
        }
        if (!later.size) end(true);
      },
      fail() { // the completion failed (its error is shown): what needs it stays as it was
        if (g !== gen) return;
        later.clear();
        end(true);
      },
    };
    deferred = d;
    const pump = () => whenIdle(() => {
      if (g !== gen) return end(false);
      if (!later.size) return;
      // a newer input is being computed: its trace replaces this one, so drawing these now would only delay it
      if (hooks.newer()) return setTimeout(pump, 30);
      const id = [...later.keys()].find((i) => ready(ctx, i)); // page order, among those the trace has the data for
      if (id) d.run(id);
      else hooks.complete(); // the rest need the trace completed: asked once, drawn when it comes
      if (later.size) (id ? pump() : setTimeout(pump, 30));
    });
    const shown = () => {
      marks.shown = String(g); // every panel on screen is drawn
      if (!later.size) end(true);
      else pump();
    };
    const queue = [...first];
    const step = () => {
      if (g !== gen) return end(false);
      // one task draws panels while they are quick (a frame's worth), the next panel (or slice) waits for the next frame
      const t0 = performance.now();
      do {
        const [id, draw] = queue.shift();
        const rest = run(draw);
        if (rest) queue.unshift([id, rest]);
      } while (queue.length && performance.now() - t0 < BUDGET);
      if (queue.length) requestAnimationFrame(step);
      else shown();
    };
    if (queue.length) step();
    else shown();
  }

  // a panel whose draw was put off is drawn as soon as it comes near the viewport
  const watch = typeof IntersectionObserver === 'function' ? new IntersectionObserver((entries) => {
    for (const e of entries) {
      const d = deferred;
      if (e.isIntersecting && d?.later.has(e.target.id)) requestAnimationFrame(() => d.run(e.target.id)); // or asks for the data
    }
  }, { rootMargin: `${100 * NEAR}% 0px` }) : null;
  for (const el of document.querySelectorAll('main section.panel')) watch?.observe(el);

  return {
    render,
    /** Whether a run now should include `what` ('all' | 'full'): some panel on or near the screen draws it. */
    wanted(ctx, what) {
      return [...document.querySelectorAll('main section.panel')].some((el) => {
        const needs = needsOf(ctx, el.id);
        if (el.hidden || !(needs.includes(what) || (what === 'full' && needs.includes('layer')))) return false;
        return onScreen(el, NEAR);
      });
    },
    /** Draws panel `id` now from a fresh context, whatever its key (an answer it waited for has come). */
    drawNow(id) {
      const p = byId.get(id);
      const ctx = hooks.context();
      if (!ctx || !p) return;
      if (p.box) ctx.width = { [p.box]: widthOf(p.box) };
      p.draw(ctx);
    },
    /** Panel `id` was changed in place to what the newest render's context now says: its key follows. */
    keep(id) {
      const p = byId.get(id);
      if (last && p?.key) keys.set(id, p.key(last));
    },
    /** The newest render's off-screen panels wait for a completion that failed: they stay as they are. */
    fail: () => deferred?.fail(),
    /** A run is due or computing. */
    busy() { marks.busy = '1'; },
    /** Clears busy when nothing is due, computing or still to draw. */
    settle() { if (!hooks.computing() && !open) delete marks.busy; },
    /** A redraw is due (a resize's; tests wait for it: harness afterDraw). */
    redrawDue() { marks.redraw = '1'; },
  };
}
