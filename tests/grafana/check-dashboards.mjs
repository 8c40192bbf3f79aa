// Checks Grafana dashboard JSON files against Grafana's published schema, @grafana/schema.
// The package ships the dashboard schema as TypeScript types (generated from Grafana's CUE schema),
// not as JSON Schema: each dashboard becomes an object literal that must satisfy `Dashboard`, and the
// options of each barchart and timeseries panel `Partial<Options>` of that panel's schema, checked by
// the TypeScript compiler (excess keys, wrong types and missing required fields are errors). JSON has
// no enums: Json<T> turns the schema's string enums into the unions of their values.
// Usage: node check-dashboards.mjs FILE.json... ; prints one line per error, exits 1 on any.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const here = path.dirname(fileURLToPath(import.meta.url));
const panelTypes = {
  barchart: '@grafana/schema/dist/esm/raw/composable/barchart/panelcfg/x/BarChartPanelCfg_types.gen',
  timeseries: '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen',
};

const files = process.argv.slice(2);
if (!files.length) {
  console.error('usage: node check-dashboards.mjs DASHBOARD.json...');
  process.exit(2);
}
// Inside this directory so that @grafana/schema resolves from its node_modules.
const dir = fs.mkdtempSync(path.join(here, '.check-'));
const sources = [];
let panels = 0;
try {
  for (const [i, file] of files.entries()) {
    const d = JSON.parse(fs.readFileSync(file, 'utf8'));
    const lines = ["import type { Dashboard } from '@grafana/schema';",
      'type Json<T> = T extends string ? `${T}` : T extends readonly (infer U)[] ? Json<U>[] : ' +
        'T extends object ? { [K in keyof T]: Json<T[K]> } : T;'];
    for (const [t, mod] of Object.entries(panelTypes))
      lines.push(`import type { Options as ${t}Options } from '${mod}';`);
    lines.push(`// ${file}`, `export const dashboard = ${JSON.stringify(d, null, 2)} satisfies Json<Dashboard>;`);
    for (const p of d.panels ?? []) {
      panels++;
      if (!panelTypes[p.type]) {
        lines.push(`// panel ${p.id}: type ${JSON.stringify(p.type)} has no options schema checked here`);
        continue;
      }
      lines.push(`export const panel${p.id} = ${JSON.stringify(p.options ?? {}, null, 2)} satisfies Partial<Json<${p.type}Options>>;`);
    }
    const src = path.join(dir, `dashboard${i}.ts`);
    fs.writeFileSync(src, lines.join('\n') + '\n');
    sources.push({ src, file });
  }
  const program = ts.createProgram(sources.map((s) => s.src), {
    strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler, skipLibCheck: true, types: [],
  });
  const diags = ts.getPreEmitDiagnostics(program);
  for (const dg of diags) {
    const msg = ts.flattenDiagnosticMessageText(dg.messageText, ' ');
    const where = dg.file ? sources.find((s) => s.src === dg.file.fileName)?.file ?? dg.file.fileName : '';
    const line = dg.file ? dg.file.getLineAndCharacterOfPosition(dg.start).line + 1 : 0;
    const text = dg.file ? dg.file.text.split('\n')[line - 1].trim() : '';
    console.log(`${where}: generated line ${line} (${text.slice(0, 80)}): ${msg}`);
  }
  if (diags.length) process.exitCode = 1;
  else console.log(`ok: ${files.length} dashboards, ${panels} panels satisfy @grafana/schema ${JSON.parse(
    fs.readFileSync(path.join(here, 'node_modules/@grafana/schema/package.json'), 'utf8')).version}`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
