// Whether the installed postgres.js has growthdesk's fix of its pool queue
// (patches/postgres+3.4.9.patch, applied by patch-package at `npm install` / `npm ci`). Without
// it, every query after a burst that kept every connection busy scans the holes that burst left
// in the queue, and the queue never gives them back: a server gets slower and larger the longer
// it runs (docs/benchmarks.md, "postgres.js' pool queue"). An install with --ignore-scripts skips
// the patch: server.ts then says so in its log.
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The patched line (see the patch): remove() searches from the queue's first element. */
const PATCHED = 'xs.indexOf(x, index)'

/** The installed postgres.js' folder. */
const installed = () => fileURLToPath(import.meta.resolve('postgres')).replace(/[\\/]src[\\/]index\.js$/, '')

/** Whether a queue.js carries the patched line. */
const patched = (file: string) => fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes(PATCHED)

/** The files of postgres.js (the installed one, or the one in `root`) that hold its queue, and whether each is patched. */
export function postgresQueueFiles(root = installed()): { file: string; patched: boolean }[] {
  return ['src', 'cjs/src', 'cf/src'].map((dir) => {
    const file = `${root}/${dir}/queue.js`
    return { file, patched: patched(file) }
  })
}

/** True when the module the app loads (postgres.js' ES module build) carries the fix: the one file server.ts reads at start. */
export function postgresQueuePatched(): boolean {
  return patched(`${installed()}/src/queue.js`)
}
