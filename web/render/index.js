// attnscope's DOM-free renderers (layer: web/render): the heatmap, lines and overview views as SVG strings,
// their raster twins (RGBA, for PNG) and the numbers behind them as CSV / JSON. Shared by the page
// (web/exports.js, the export buttons) and the command line (bin/attnscope.mjs). Imports nothing but web/dom.js's
// pure helpers and ../aggregates.js. figureOf turns a model trace into what a view shows.
export { paletteFrom, MASKED, colorIndex, escapeXml } from './common.js';
export { heatmapGrid, heatmapSvg } from './heatmap.js';
export { overviewGrid, overviewSvg } from './overview.js';
export { linesLayout, linesSvg } from './lines.js';
export { gridRaster, linesRaster } from './raster.js';
export { toCsv, toJson } from './data.js';
export { figureOf, figureSvg, figureRaster, panelTitle } from './figure.js';
