import { escapeHtml as e } from './escape.js';

/**
 * The report card's plots: small inline SVG drawn from numbers, styled by the page's CSS
 * (classes, so the light, dark and print schemes apply). No script, no external asset.
 */

export interface Bar {
  label: string;
  value: number;
  /** Drawn in the waste colour. */
  waste?: boolean;
}

/** The plots' width in user units; drawn about 1:1 on the page (max-width in the CSS). */
const W = 880;

/** A label cut to `n` characters, with an ellipsis when cut (the full text is in the bar's title). */
const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** Horizontal bars, one row each, labels on the left and values on the right. */
export function hbars(bars: readonly Bar[], opts: { title: string; format: (n: number) => string }): string {
  const row = 22;
  const labelW = 230;
  const valueW = 90;
  const max = Math.max(0, ...bars.map((b) => b.value));
  const h = Math.max(1, bars.length) * row + 4;
  const rows = bars.map((b, i) => {
    const y = i * row + 2;
    const w = max > 0 ? Math.max(1, ((W - labelW - valueW) * b.value) / max) : 0;
    return `<text class="lbl" x="${labelW - 6}" y="${y + 15}" text-anchor="end">${e(cut(b.label, 30))}</text><rect class="${b.waste ? 'bar waste' : 'bar'}" x="${labelW}" y="${y + 3}" width="${w.toFixed(1)}" height="${row - 6}"><title>${e(b.label)}: ${e(opts.format(b.value))}</title></rect><text class="val" x="${(labelW + w + 4).toFixed(1)}" y="${y + 15}">${e(opts.format(b.value))}</text>`;
  });
  return `<svg class="plot" role="img" aria-label="${e(opts.title)}" viewBox="0 0 ${W} ${h}" width="100%" preserveAspectRatio="xMinYMin meet"><title>${e(opts.title)}</title>${rows.join('')}</svg>`;
}

/** Vertical columns (a histogram or a series by day), labels under every `labelEvery`th column. */
export function columns(
  bars: readonly Bar[],
  opts: { title: string; format: (n: number) => string; labelEvery?: number; marker?: { at: number; label: string } },
): string {
  const h = 180;
  const base = h - 28;
  const n = Math.max(1, bars.length);
  const slot = Math.min(56, (W - 40) / n);
  const max = Math.max(0, ...bars.map((b) => b.value));
  const every = opts.labelEvery ?? 1;
  const cols = bars.map((b, i) => {
    const x = 30 + i * slot;
    const bh = max > 0 ? ((base - 14) * b.value) / max : 0;
    const label =
      i % every === 0
        ? `<text class="lbl" x="${(x + slot / 2).toFixed(1)}" y="${base + 16}" text-anchor="middle">${e(cut(b.label, 8))}</text>`
        : '';
    return `<rect class="${b.waste ? 'bar waste' : 'bar'}" x="${(x + 1).toFixed(1)}" y="${(base - bh).toFixed(1)}" width="${Math.max(1, slot - 2).toFixed(1)}" height="${bh.toFixed(1)}"><title>${e(b.label)}: ${e(opts.format(b.value))}</title></rect>${label}`;
  });
  const marker = opts.marker
    ? `<line class="marker" x1="${(30 + opts.marker.at * slot).toFixed(1)}" x2="${(30 + opts.marker.at * slot).toFixed(1)}" y1="4" y2="${base}"/><text class="lbl" x="${(30 + opts.marker.at * slot - 4).toFixed(1)}" y="14" text-anchor="end">${e(opts.marker.label)}</text>`
    : '';
  const axis = `<line class="axis" x1="28" x2="${(30 + n * slot).toFixed(1)}" y1="${base}" y2="${base}"/><text class="val" x="2" y="16">${e(opts.format(max))}</text>`;
  return `<svg class="plot" role="img" aria-label="${e(opts.title)}" viewBox="0 0 ${W} ${h}" width="100%" preserveAspectRatio="xMinYMin meet"><title>${e(opts.title)}</title>${axis}${cols.join('')}${marker}</svg>`;
}

/** One bar split in two (a share), e.g. no-progress against progress spend. */
export function shareBar(share: number, opts: { title: string; left: string; right: string }): string {
  const w = Math.max(0, Math.min(1, share)) * (W - 4);
  return `<svg class="plot" role="img" aria-label="${e(opts.title)}" viewBox="0 0 ${W} 40" width="100%"><title>${e(opts.title)}</title><rect class="bar" x="2" y="4" width="${W - 4}" height="18"/><rect class="bar waste" x="2" y="4" width="${w.toFixed(1)}" height="18"/><text class="lbl" x="2" y="36">${e(opts.left)}</text><text class="lbl" x="${W - 2}" y="36" text-anchor="end">${e(opts.right)}</text></svg>`;
}
