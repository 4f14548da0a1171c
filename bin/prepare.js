// `npm install` and `npm ci` run this (package.json's `prepare`): builds the migrated embedded
// database that a first start copies instead of running PGlite's initdb (db/pglite-template.ts),
// about 6 s once here instead of on the first start. It never fails an install: without the
// template, a first start creates the database itself, as before.
import module from 'node:module'
module.enableCompileCache?.()
try {
  const { pgliteTemplate } = await import('../db/client.ts')
  await pgliteTemplate()
} catch (err) {
  process.stderr.write(`growthdesk: no embedded-database template was built (${err.message}); a first start will create the database itself.\n`)
}
