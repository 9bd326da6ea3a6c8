// Token chips (text + id) and the input text with each token's [start, end) UTF-16 span highlighted
// (layer: web). Text goes in through textContent only. Hovering a chip lights its span and back.
import { h, tokenLabel } from '../dom.js';
import { t as tr } from '../i18n.js';

/** tokensView({ text, tokens, ids, offsets, selected, onSelect }) → HTMLElement */
export function tokensView(o) {
  const { text, tokens, ids, offsets } = o;
  const spans = [];
  const chips = [];
  const light = (i, on) => {
    spans[i]?.classList.toggle('hot', on);
    chips[i]?.classList.toggle('hot', on);
  };

  const chipBox = h('div', { class: 'chips', role: 'list', 'aria-label': tr('tokens.list'), 'data-no-i18n': '' });
  tokens.forEach((t, i) => {
    const chip = h('button', {
      class: `chip${i === o.selected ? ' selected' : ''}${t === '<pad>' && ids?.[i] === -1 ? ' pad' : ''}`,
      type: 'button',
      role: 'listitem',
      title: tr('tokens.chipTitle', { i, token: JSON.stringify(t), id: ids ? tr('tokens.chipId', { id: ids[i] }) : '' }),
      dataset: { i, id: ids ? ids[i] : '' },
    }, h('span', { class: 'chip-text', text: tokenLabel(t, 18) }),
    ids && ids[i] >= 0 ? h('span', { class: 'chip-id', text: String(ids[i]) }) : null);
    chip.addEventListener('mouseenter', () => light(i, true));
    chip.addEventListener('mouseleave', () => light(i, false));
    chip.addEventListener('focus', () => light(i, true));
    chip.addEventListener('blur', () => light(i, false));
    if (o.onSelect) chip.addEventListener('click', () => o.onSelect(i));
    chips[i] = chip;
    chipBox.append(chip);
  });

  const out = [chipBox];
  if (offsets && text != null) {
    // focusable: a long text scrolls inside the box (max-height), and the keyboard must reach it (axe scrollable-region-focusable)
    const spanBox = h('div', { class: 'spans', role: 'group', tabindex: 0, 'aria-label': tr('tokens.spans'), 'data-no-i18n': '' });
    let at = 0;
    const order = tokens.map((_, i) => i).filter((i) => offsets[2 * i] >= 0)
      .sort((a, b) => offsets[2 * a] - offsets[2 * b]);
    for (const i of order) {
      const [s, e] = [offsets[2 * i], offsets[2 * i + 1]];
      if (s < at) continue; // overlapping spans (byte-level BPE inside one character): show once
      if (s > at) spanBox.append(text.slice(at, s));
      const span = h('span', { class: `span span${i % 2}${i === o.selected ? ' selected' : ''}`, text: text.slice(s, e), dataset: { i } });
      span.addEventListener('mouseenter', () => light(i, true));
      span.addEventListener('mouseleave', () => light(i, false));
      if (o.onSelect) span.addEventListener('click', () => o.onSelect(i));
      spans[i] = span;
      spanBox.append(span);
      at = e;
    }
    if (at < text.length) spanBox.append(text.slice(at));
    out.push(spanBox);
  }
  return h('div', { class: 'tokens-view' }, out);
}
