// `growthdesk admin copy-database --to postgres://…`: everything the configured database holds
// (the embedded one, typically) copied into a new PostgreSQL database, in one transaction there:
// how a deployment that outgrew the embedded database moves to PostgreSQL with its data.
import { defineCommand } from './command.ts'

export const copyDatabaseCommand = defineCommand({
  path: ['admin', 'copy-database'],
  summary: 'Copy everything the configured database holds into a new PostgreSQL database (embedded → PostgreSQL).',
  details: [
    'The target is migrated, then filled in one transaction: all of it lands, or nothing. It must hold no workspace yet.',
    'Stop the server first (the embedded database allows one process). Afterwards start it with DATABASE_URL set to the target,',
    'and the same SECRETS_KEY: the sealed secrets are copied as they are. The target\'s user must be a superuser',
    '(or hold SET on session_replication_role): triggers stay off while the rollups are copied.',
  ],
  options: {
    to: { type: 'string', value: 'URL', description: 'the PostgreSQL database to fill (postgres://…)', required: true },
    json: { type: 'boolean', description: 'print the result as one line of JSON' },
  },
  async run(inv) {
    const to = inv.options.to
    if (!/^postgres(ql)?:\/\//.test(to)) inv.usage('--to must be a postgres:// URL')
    await inv.withApp(async (app, config) => {
      if (config.database.kind === 'postgres' && config.database.url === to) return inv.fail('--to is the configured database itself.')
      const [{ openDatabase }, { copyDatabase, CopyError }] = await Promise.all([import('../db/client.ts'), import('../db/copy.ts')])
      const target = await openDatabase({ kind: 'postgres', url: to })
      try {
        const started = performance.now()
        const result = await copyDatabase(app.database, target, (line) => inv.io.stderr.write(`copy-database: ${line}\n`))
        const rows = result.tables.reduce((n, t) => n + t.rows, 0)
        const url = new URL(to)
        inv.print({ ...result, rows, seconds: Math.round((performance.now() - started) / 100) / 10 }, [
          `Copied ${rows} rows of ${result.tables.filter((t) => t.rows > 0).length} tables (and ${result.sequences} sequences) into ${url.host}${url.pathname} in ${((performance.now() - started) / 1000).toFixed(1)} s.`,
          `Start growthdesk with DATABASE_URL=${url.protocol}//…${url.pathname} and the same SECRETS_KEY.`,
        ])
      } catch (err) {
        if (err instanceof CopyError) return inv.fail(err.message)
        throw err
      } finally {
        await target.close()
      }
    })
  },
})
