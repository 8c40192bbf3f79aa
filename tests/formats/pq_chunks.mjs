// Prints, as hyparquet reads a Parquet file's footer, its row groups and the bytes of the named columns' chunks
// (all of them: none named), summed over the row groups: what a projected read of the whole file takes.
// usage: node pq_chunks.mjs FILE [COLUMN...]
import { readFileSync } from 'node:fs'
import { parquetMetadata } from '../grafana/node_modules/hyparquet/src/index.js'

const [file, ...cols] = process.argv.slice(2)
const b = readFileSync(file)
const md = parquetMetadata(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength))
let bytes = 0n
for (const g of md.row_groups) {
  for (const c of g.columns) {
    if (cols.length === 0 || cols.includes(c.meta_data.path_in_schema[0])) bytes += BigInt(c.meta_data.total_compressed_size)
  }
}
console.log(`${md.row_groups.length} ${bytes}`)
