// Reads a Parquet file railbench wrote with hyparquet (an independent reader) and checks its schema, row groups and
// every value against railbench's seeded payload, recomputed here from docs/load.md's definition.
// usage: node check_parquet.mjs FILE OBJECT-NAME SEED scalar|list NCOLS ROW-BYTES ROWS ROW-GROUP-ROWS
import { readFileSync } from 'node:fs'
import { parquetMetadata, parquetReadObjects } from '../grafana/node_modules/hyparquet/src/index.js'

const [file, name, seedS, kind, ncolsS, rowBytesS, rowsS, rgS] = process.argv.slice(2)
const seed = BigInt(seedS), ncols = Number(ncolsS), rowBytes = Number(rowBytesS), rows = Number(rowsS), rg = Number(rgS)
const M = (1n << 64n) - 1n, GOLDEN = 0x9e3779b97f4a7c15n
const mix = (z) => {
  z &= M
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M
  return z ^ (z >> 31n)
}
const pattern = []
for (let s = 0x5041545445524en, j = 0; j < 512; j++) { s = (s + GOLDEN) & M; pattern.push(mix(s)) }
let h = 0xcbf29ce484222325n
for (const c of Buffer.from(name)) { h ^= BigInt(c); h = (h * 0x100000001b3n) & M }
const key = mix(h ^ mix(seed + GOLDEN))
const blockWord = new Map()
// The plain payload's bytes [off, off + n): byte o is byte o % 8 of pattern[(o / 8) % 512] ^ mix(key + block * golden).
function payload (off, n) {
  const out = new Uint8Array(n)
  for (let k = 0; k < n; k++) {
    const o = off + k, i = Math.floor(o / 8), b = Math.floor(i / 512)
    let m = blockWord.get(b)
    if (m === undefined) { m = mix(key + BigInt(b) * GOLDEN); blockWord.set(b, m) }
    out[k] = Number(((pattern[i % 512] ^ m) >> BigInt(8 * (o % 8))) & 0xffn)
  }
  return out
}
const fail = (msg) => { console.error(`check_parquet: ${file}: ${msg}`); process.exit(1) }

const bytes = readFileSync(file)
const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)
const md = parquetMetadata(ab)
if (Number(md.num_rows) !== rows) fail(`num_rows ${md.num_rows}, expected ${rows}`)
const nrg = Math.ceil(rows / rg)
if (md.row_groups.length !== nrg) fail(`${md.row_groups.length} row groups, expected ${nrg}`)
md.row_groups.forEach((g, i) => {
  const want = Math.min(rg, rows - i * rg)
  if (Number(g.num_rows) !== want) fail(`row group ${i}: ${g.num_rows} rows, expected ${want}`)
  for (const c of g.columns) if (c.meta_data.codec !== 'UNCOMPRESSED') fail(`compressed column chunk ${c.meta_data.codec}`)
})
const unit = kind === 'list' ? 4 : 1
const per = Math.floor(rowBytes / unit / ncols), extra = (rowBytes / unit) % ncols
const cols = []
for (let c = 0, base = 0; c < ncols; c++) {
  const k = per + (c < extra ? 1 : 0)
  const col = kind === 'list' ? { width: 4, perRow: k, base } : { width: k, perRow: 1, base }
  cols.push(col)
  base += rows * k * unit
}
// The schema: a root and each column (a LIST column as three elements).
const top = md.schema.slice(1).filter((e) => e.name.match(/^c\d+$/))
if (top.length !== ncols) fail(`${top.length} top-level columns, expected ${ncols}`)
top.forEach((e, c) => {
  if (e.name !== `c${c}`) fail(`column ${c} named ${e.name}`)
  const w = cols[c].width
  if (kind === 'list') {
    if (e.converted_type !== 'LIST') fail(`column c${c} is not a LIST (${e.converted_type})`)
  } else {
    const t = w === 4 ? 'FLOAT' : w === 8 ? 'DOUBLE' : 'FIXED_LEN_BYTE_ARRAY'
    if (e.type !== t) fail(`column c${c}: ${e.type}, expected ${t}`)
    if (t === 'FIXED_LEN_BYTE_ARRAY' && e.type_length !== w) fail(`column c${c}: type_length ${e.type_length}`)
  }
})
// Every value: the payload at the column's base, row after row; a float's bit 30 (a double's 62) cleared.
function expected (c, r, e) {
  const col = cols[c], v = payload(col.base + (r * col.perRow + e) * col.width, col.width)
  if (kind === 'list' || col.width === 4) { v[3] &= 0xbf; return new DataView(v.buffer).getFloat32(0, true) }
  if (col.width === 8) { v[7] &= 0xbf; return new DataView(v.buffer).getFloat64(0, true) }
  return v
}
const got = await parquetReadObjects({ file: ab })
if (got.length !== rows) fail(`hyparquet read ${got.length} rows, expected ${rows}`)
let values = 0
for (let r = 0; r < rows; r++) {
  for (let c = 0; c < ncols; c++) {
    const v = got[r][`c${c}`]
    if (kind === 'list') {
      if (!Array.isArray(v) || v.length !== cols[c].perRow) fail(`row ${r} c${c}: a list of ${v && v.length}, expected ${cols[c].perRow}`)
      for (let e = 0; e < v.length; e++, values++) if (v[e] !== expected(c, r, e)) fail(`row ${r} c${c}[${e}]: ${v[e]}, expected ${expected(c, r, e)}`)
    } else {
      const want = expected(c, r, 0)
      values++
      if (want instanceof Uint8Array) {
        const b = v instanceof Uint8Array ? v : typeof v === 'string' ? Buffer.from(v, 'latin1') : null
        if (!b || Buffer.compare(Buffer.from(b), Buffer.from(want)) !== 0) fail(`row ${r} c${c}: bytes differ`)
      } else if (v !== want) {
        fail(`row ${r} c${c}: ${v}, expected ${want}`)
      }
    }
  }
}
console.log(`ok rows=${rows} row_groups=${nrg} columns=${ncols} values=${values}`)
