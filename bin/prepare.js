// `npm install` and `npm ci` run this (package.json's `prepare`): builds the migrated embedded
// database that a first start copies instead of running PGlite's initdb (db/pglite-template.ts),
// about 5 s once here instead of on the first start. It never fails an install: without the
// template, a first start creates the database itself, as before. Run with npm start's
// WebAssembly flags (start.js): initdb took 6.4–7.8 s and 1.1 GB without them, 4.3–4.5 s and
// 0.55 GB with.
// On a Node too old to strip types: the one line of bin/node-version.js, nothing built, and still
// exit code 0 (the install itself is fine; `npm start` says the same line and stops).
import module from 'node:module'
import { nodeVersionSupported } from './node-version.js'
if (nodeVersionSupported()) {
  module.enableCompileCache?.()
  try {
    const { pgliteTemplate } = await import('../db/client.ts')
    await pgliteTemplate()
  } catch (err) {
    process.stderr.write(`growthdesk: no embedded-database template was built (${err.message}); a first start will create the database itself.\n`)
  }
}
