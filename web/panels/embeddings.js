// Panel 2: the embedding map (redrawn for a new trace, width or language; a token click moves its selected row).
import { $, replace } from '../dom.js';
import { embeddingsView } from '../views/embeddings.js';
import { selectRows } from './common.js';

export const embeddings = {
  id: 'panel-embeddings',
  box: 'embeddings',
  needs: () => [],
  key: (ctx) => (ctx.trace.example ? null : [ctx.serial, ctx.width.embeddings, ctx.lang].join('|')),
  update: (ctx) => selectRows('#embeddings canvas[data-name="embeddings"]', ctx.state.token),
  draw(ctx) {
    replace($('embeddings'), embeddingsView({ trace: ctx.trace, width: ctx.width.embeddings, selected: ctx.state.token, onSelect: ctx.act.select }));
    return null;
  },
};
