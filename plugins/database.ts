// Opens the configured database, applies migrations, and closes it with the app.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { openDatabase, type Database, type DatabaseConfig, type Db } from '../db/client.ts'

declare module 'fastify' {
  interface FastifyInstance {
    database: Database
    db: Db
    /** How long opening and migrating took, in ms (the server's start-up line reports them). */
    databaseTimings: { openMs: number; migrateMs: number }
  }
}

export interface DatabasePluginOptions {
  database: DatabaseConfig
}

async function databasePlugin(app: FastifyInstance, options: DatabasePluginOptions) {
  const started = performance.now()
  const database = await openDatabase(options.database)
  const opened = performance.now()
  try {
    await database.migrate()
  } catch (err) {
    await database.close()
    throw err
  }
  app.decorate('databaseTimings', { openMs: opened - started, migrateMs: performance.now() - opened })
  app.decorate('database', database)
  app.decorate('db', database.db)
  app.addHook('onClose', async () => {
    await database.close()
  })
}

export default fp(databasePlugin, { name: 'database', fastify: '5.x' })
