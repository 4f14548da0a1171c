import postgres from 'postgres'
import { buildApp } from './app.ts'
import { loadConfig } from './config.ts'
import { bootstrap } from './bin/admin.ts'
import { loadOpportunities } from './bench/load.ts'
import { localDate } from './core/time.ts'
const admin = postgres('postgres://postgres@127.0.0.1:5432/test', { max: 1, onnotice: () => {} })
await admin.unsafe('drop database if exists simx with (force)'); await admin.unsafe('create database simx'); await admin.end()
const url = 'postgres://postgres@127.0.0.1:5432/simx'
const app = await buildApp({ config: { ...loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn' }), database: { kind: 'postgres', url }, logLevel: 'warn' }, logger: false })
const boot = await bootstrap(app, { workspace: 'bench', email: 'bench@x.bench', project: 'Bench' })
await app.close()
const sql = postgres(url, { max: 2, onnotice: () => {} })
const now = new Date()
await loadOpportunities(sql, { projectId: boot.project.id, timeZone: 'UTC', submittedBy: boot.user.id, events: 0, users: 0, days: 90, opportunities: 100000, now, today: localDate(now, 'UTC') }, 2, 20000, () => {})
await sql.unsafe('analyze opportunities')
console.log('project', boot.project.id)
await sql.end()
