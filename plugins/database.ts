// Opens the configured database, applies migrations, and closes it with the app.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { openDatabase, type Database, type Db } from '../db/client.ts'
import type { Database as DatabaseConfig } from '../config.ts'

declare module 'fastify' {
  interface FastifyInstance {
    database: Database
    db: Db
  }
}

export interface DatabasePluginOptions {
  database: DatabaseConfig
}

async function databasePlugin(app: FastifyInstance, options: DatabasePluginOptions) {
  const database = await openDatabase(options.database)
  try {
    await database.migrate()
  } catch (err) {
    await database.close()
    throw err
  }
  app.decorate('database', database)
  app.decorate('db', database.db)
  app.addHook('onClose', async () => {
    await database.close()
  })
}

export default fp(databasePlugin, { name: 'database', fastify: '5.x' })
