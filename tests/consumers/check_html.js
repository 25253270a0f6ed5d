// check_html.js SPEC.json - open HTML reports in Debian's chromium through
// playwright-core (the system browser, never a downloaded one) and check
// them as a reader would: no page or console error, no network request,
// every section there, the numbers shown equal to the page's own data and
// to the expectations of SPEC (from h5py's reading of the files), a tree row
// expands when clicked, the timeline's window changes when zoomed, a flame
// graph search paints frames, the page reads without JavaScript too.  One
// screenshot per page.  Prints one JSON line per page; exit 1 on failure.
'use strict';
const fs = require('fs');
const path = require('path');

const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const { chromium } = require(path.join(spec.node_modules, 'playwright-core'));

function fail(page, msg) {
  console.error(`FAIL: ${page}: ${msg}`);
  process.exitCode = 1;
  throw new Error(msg);
}

// Same text as the page's fmt() and the C side's sp_format_duration.
function fmt(ns) {
  if (ns === null || ns < 0) return '-';
  if (ns < 1000) return Math.round(ns) + ' ns';
  const units = [[1e3, '\u00b5s'], [1e6, 'ms'], [1e9, 's']];
  for (let u = 0; u < units.length; u++) {
    const v = ns / units[u][0], last = u === units.length - 1;
    if (v < 9.995) return v.toFixed(2) + ' ' + units[u][1];
    if (v < 99.95) return v.toFixed(1) + ' ' + units[u][1];
    if (v < 999.5 || last) return v.toFixed(0) + ' ' + units[u][1];
  }
}

async function checkPage(browser, p) {
  const context = await browser.newContext({ viewport: { width: 1300, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push('console: ' + m.text()); });
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  page.on('request', (r) => { if (!r.url().startsWith('file:')) problems.push('network request: ' + r.url()); });
  const t0 = Date.now();
  await page.goto('file://' + p.html);
  await page.waitForFunction(() => window.scopeprofReport && window.scopeprofReport.ready, null, { timeout: 120000 });
  const loadMs = Date.now() - t0;

  const titles = await page.$$eval('h2', (hs) => hs.map((h) => h.textContent.trim()));
  for (const s of p.sections) if (!titles.includes(s)) fail(p.name, `section "${s}" missing (have ${titles})`);
  for (const s of p.absent || []) if (titles.includes(s)) fail(p.name, `section "${s}" shown but not expected`);

  // The numbers the page shows against the data it carries.
  const seen = await page.evaluate(() => {
    const data = JSON.parse(document.getElementById('sp-data').textContent);
    const run = data.runs[0], T = run.tree, names = run.regions.names;
    const paths = {};
    for (let i = 0; i < T.parent.length; i++) {
      const p = [];
      for (let j = i; j >= 0; j = T.parent[j]) p.push(names[T.region[j]]);
      paths[p.reverse().join(' > ')] = { calls: T.calls[i], incl: T.incl[i], excl: T.excl[i], node: i,
        stats: [T.min[i], T.max[i], T.p95[i]] };
    }
    const cells = (sel) => Array.from(document.querySelectorAll(sel)).map((tr) =>
      ({ node: tr.getAttribute('data-node'), region: tr.getAttribute('data-region'),
         cells: Array.from(tr.cells).map((c) => c.textContent.trim()) }));
    const facts = {};
    document.querySelectorAll('.fact').forEach((f) => { facts[f.id.slice(5)] = f.querySelector('dd').textContent; });
    return { run, paths, facts, hot: cells('#hotspots-table tbody tr[data-node]'),
      total: document.querySelector('#hotspots-table tfoot td:nth-child(2)').textContent,
      tree: cells('#tree-table tbody tr[data-node]'), balance: cells('#balance-table tbody tr'),
      threads: cells('#threads-table tbody tr'), findings: document.querySelectorAll('#findings li').length,
      compare: cells('#compare-table tbody tr') };
  });
  const { run } = seen;
  if (seen.findings < 3 || seen.findings > 5) fail(p.name, `${seen.findings} findings, expected 3 to 5`);
  for (const [k, v] of Object.entries(p.facts || {}))
    if (seen.facts[k] !== v) fail(p.name, `header ${k} is "${seen.facts[k]}", expected "${v}"`);
  for (const [k, v] of Object.entries(p.paths || {})) {
    const got = seen.paths[k];
    if (!got || got.calls !== v) fail(p.name, `call path ${k}: ${got ? got.calls : 'missing'} calls, expected ${v}`);
  }
  for (const [k, v] of Object.entries(p.stats || {})) {
    const got = seen.paths[k];
    if (!got || JSON.stringify(got.stats) !== JSON.stringify(v))
      fail(p.name, `call path ${k}: min/max/p95 ${got && got.stats}, expected ${v}`);
  }
  if (p.paths && Object.keys(seen.paths).length !== Object.keys(p.paths).length)
    fail(p.name, `${Object.keys(seen.paths).length} call paths on the page, expected ${Object.keys(p.paths).length}`);
  let sum = 0;
  run.tree.excl.forEach((e) => { sum += e; });
  if (seen.total !== fmt(sum)) fail(p.name, `hotspots total ${seen.total}, the tree's own times add to ${fmt(sum)}`);
  for (const r of seen.hot)
    if (r.cells[1] !== fmt(run.tree.excl[r.node])) fail(p.name, `hotspot row ${r.cells[0]}: ${r.cells[1]} != ${fmt(run.tree.excl[r.node])}`);
  if (!seen.tree.length) fail(p.name, 'call tree has no row');
  for (const r of seen.tree) {
    const n = +r.node;
    if (r.cells[1] !== fmt(run.tree.incl[n]) || r.cells[3] !== String(run.tree.calls[n]) ||
        r.cells[7] !== fmt(run.tree.p95[n]))
      fail(p.name, `tree row ${r.cells[0]}: ${r.cells} against incl ${run.tree.incl[n]}, calls ${run.tree.calls[n]}, p95 ${run.tree.p95[n]}`);
  }
  // The static table is printed by C (printf rounds an exact tie such as
  // 23.25 to even: 23.2), the script's fmt by toFixed (23.3): either side
  // of a tie is the same number.
  const shown = (cell, v) => cell === fmt(v) || cell === fmt(v * (1 - 1e-9)) || cell === fmt(v * (1 + 1e-9));
  for (const r of seen.balance) {
    const c = run.cross.find((x) => String(x.region) === r.region);
    if (!c || !shown(r.cells[1], Math.round(c.mean)) || r.cells[4] !== String(c.slowest) || !shown(r.cells[6], c.excess))
      fail(p.name, `load balance row ${r.cells} against ${JSON.stringify(c)}`);
  }
  for (const [region, rank] of Object.entries(p.slowest || {})) {
    const r = seen.balance.find((x) => x.cells[0] === region);
    if (!r || r.cells[4] !== String(rank)) fail(p.name, `slowest rank of ${region}: ${r && r.cells[4]}, expected ${rank}`);
  }
  if (seen.threads.length !== run.threads.length) fail(p.name, `${seen.threads.length} thread rows for ${run.threads.length} threads`);
  if (p.threads !== undefined && seen.threads.length !== p.threads) fail(p.name, `${seen.threads.length} thread rows, expected ${p.threads}`);
  if (p.compare && seen.compare.length < 2) fail(p.name, 'comparison table empty');
  for (const [call, calls] of Object.entries(p.mpi || {})) {
    const row = await page.$$eval('#mpi-table tbody tr', (trs, c) =>
      trs.map((tr) => Array.from(tr.cells).map((x) => x.textContent)).find((r) => r[0] === c), call);
    if (!row || row[1] !== String(calls)) fail(p.name, `MPI table row of ${call}: ${row}, expected ${calls} calls`);
    if (!(await page.$('#mpi-rank-share'))) fail(p.name, 'no per-rank MPI share');
  }
  if (p.heatmap) {
    const h = await page.evaluate(() => window.scopeprofReport.heatmap);
    if (!h || h.bins !== p.heatmap.bins || h.perBin !== p.heatmap.perBin)
      fail(p.name, `heatmap ${JSON.stringify(h)}, expected ${JSON.stringify(p.heatmap)}`);
  }

  // Clicking a collapsed tree row with children expands it.
  await page.click('#tree-collapse');
  const before = await page.evaluate(() => window.scopeprofReport.tree.rows);
  const parentRow = await page.evaluate(() => {
    const run = JSON.parse(document.getElementById('sp-data').textContent).runs[0];
    const rows = Array.from(document.querySelectorAll('#tree-table tbody tr[data-node]'));
    const r = rows.find((tr) => run.tree.parent.includes(+tr.getAttribute('data-node')));
    return r ? r.getAttribute('data-node') : null;
  });
  if (parentRow !== null) {
    await page.click(`#tree-table tbody tr[data-node="${parentRow}"] td.name`);
    const after = await page.evaluate(() => window.scopeprofReport.tree.rows);
    if (!(after > before)) fail(p.name, `clicking tree row ${parentRow}: ${before} rows before, ${after} after`);
  }
  // Sorting by a column orders the roots by it.
  await page.click('#tree-table th[data-key="calls"]');
  const order = await page.evaluate(() => {
    const run = JSON.parse(document.getElementById('sp-data').textContent).runs[0];
    return Array.from(document.querySelectorAll('#tree-table tbody tr[data-node]'))
      .map((tr) => +tr.getAttribute('data-node')).filter((n) => run.tree.parent[n] < 0)
      .map((n) => run.tree.calls[n]);
  });
  for (let k = 1; k < order.length; k++)
    if (order[k] > order[k - 1]) fail(p.name, `sorted by calls, roots come as ${order}`);
  await page.click('#tree-table th[data-key="incl"]');
  // Tree search marks rows; flame search paints frames magenta.
  const hotName = run.regions.names[run.tree.region[seen.hot[0].node]];
  await page.fill('#tree-search', hotName);
  const marked = await page.$$eval('#tree-table tr.match', (x) => x.length);
  if (!marked) fail(p.name, `tree search for ${hotName} marks no row`);
  await page.fill('#flame-search', hotName);
  const flame = await page.evaluate(() => {
    const c = document.querySelector('#flame-view canvas'), g = c.getContext('2d');
    const px = g.getImageData(0, 0, c.width, c.height).data;
    let magenta = 0;
    for (let i = 0; i < px.length; i += 4) if (px[i] === 230 && px[i + 1] === 0 && px[i + 2] === 230) magenta++;
    return { matched: window.scopeprofReport.flame.matched, magenta };
  });
  if (!flame.matched || !flame.magenta) fail(p.name, `flame search for ${hotName}: ${JSON.stringify(flame)}`);
  // Zooming the timeline narrows the visible window.
  if (run.timeline) {
    const w0 = await page.evaluate(() => window.scopeprofReport.timeline.window.slice());
    await page.click('#timeline-zoom-in');
    const w1 = await page.evaluate(() => window.scopeprofReport.timeline.window.slice());
    if (!(w1[1] - w1[0] < w0[1] - w0[0])) fail(p.name, `timeline zoom: window ${w0} then ${w1}`);
    const box = await page.$('#timeline-canvas');
    const bb = await box.boundingBox();
    await page.mouse.move(bb.x + bb.width / 2, bb.y + 30);
    await page.mouse.wheel(0, -400);
    const w2 = await page.evaluate(() => window.scopeprofReport.timeline.window.slice());
    if (!(w2[1] - w2[0] < w1[1] - w1[0])) fail(p.name, `timeline wheel zoom: window ${w1} then ${w2}`);
    await page.click('#timeline-reset');
    // Hovering a drawn call (or cell) tells what it is.
    const at = await page.evaluate(() => window.scopeprofReport.timeline.probe());
    if (!at) fail(p.name, 'timeline: nothing drawn on the first lane');
    // From outside the canvas first: a move to where the pointer already is
    // dispatches no mousemove.  Then wait for the tooltip, which a loaded
    // machine may draw a little later.
    await page.mouse.move(0, 0);
    await page.mouse.move(at.x, at.y, { steps: 2 });
    await page
      .waitForFunction(() => document.getElementById('tooltip').style.display === 'block', null, { timeout: 20000 })
      .catch(() => {});
    const tipText = await page.$eval('#tooltip', (t) => (t.style.display === 'block' ? t.textContent : ''));
    if (!tipText.startsWith('rank ' + run.timeline.lanes[0].rank))
      fail(p.name, `timeline hover at ${JSON.stringify(at)}: tooltip "${tipText}"`);
    await page.mouse.move(0, 0);
  }
  await page.fill('#tree-search', '');
  await page.fill('#flame-search', '');
  await page.evaluate(() => window.scrollTo(0, 0));
  // A full-page shot of the 1,024-rank page once took longer than the
  // default 30 s on the loaded 2-core machine: the page is not at fault.
  await page.screenshot({ path: p.screenshot, fullPage: true, timeout: 120000 });
  if (problems.length) fail(p.name, problems.join('; '));
  await context.close();

  // Without JavaScript: the static tables carry the numbers.
  const nojs = await browser.newContext({ javaScriptEnabled: false });
  const plain = await nojs.newPage();
  await plain.goto('file://' + p.html);
  const stat = await plain.evaluate(() => ({
    titles: Array.from(document.querySelectorAll('h2')).map((h) => h.textContent.trim()),
    hot: document.querySelectorAll('#hotspots-table tbody tr').length,
    tree: document.querySelectorAll('#tree-table tbody tr').length,
  }));
  for (const s of p.sections) if (!stat.titles.includes(s)) fail(p.name, `without JavaScript: section "${s}" missing`);
  if (!stat.hot || !stat.tree) fail(p.name, `without JavaScript: ${stat.hot} hotspot rows, ${stat.tree} tree rows`);
  await nojs.close();
  return { page: p.name, loadMs, bytes: fs.statSync(p.html).size, paths: Object.keys(seen.paths).length,
    screenshot: p.screenshot };
}

(async () => {
  const browser = await chromium.launch({ executablePath: spec.chromium,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] });
  try {
    for (const p of spec.pages) {
      try {
        console.log(JSON.stringify(await checkPage(browser, p)));
      } catch (e) {
        if (!process.exitCode) console.error(`FAIL: ${p.name}: ${e.stack || e}`);
        process.exitCode = 1;
      }
    }
  } finally {
    await browser.close();
  }
})();
