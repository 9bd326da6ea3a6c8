// Panel 3: positional encoding (text mode only; redrawn for a new trace, width or language).
import { $, replace } from '../dom.js';
import { positionalView } from '../views/positional.js';
import { selectRows } from './common.js';

export const positional = {
  id: 'panel-positional',
  box: 'positional-view',
  shows: (ctx) => !ctx.trace.example, // the worked example has no positional panel (data-when="text")
  needs: () => [],
  key: (ctx) => [ctx.serial, ctx.width['positional-view'], ctx.lang].join('|'),
  update: (ctx) => selectRows('#positional-view canvas[data-name="e"], #positional-view canvas[data-name="pe"], #positional-view canvas[data-name="input"]', ctx.state.token),
  draw(ctx) {
    const width = ctx.width['positional-view'];
    replace($('positional-view'), positionalView({ trace: ctx.trace, state: ctx.traceState, width, selected: ctx.state.token, onSelect: ctx.act.select }));
    return null;
  },
};
