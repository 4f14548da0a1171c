// drizzle-orm, loaded through its CommonJS build. Its ES-module build costs about 0.8 s and
// 280 MB of memory to load on Node 22 and 24 (measured: 0.95 s / 354 MB against 0.14 s / 74 MB):
// for every one of its ~400 files Node re-parses the package's 178 KB `exports` map while
// resolving the file's relative imports. The CommonJS files name their siblings by `.cjs`, which
// needs no package lookup. Same code, same types; everything in db/ takes drizzle from here.
import { createRequire } from 'node:module'

// drizzle-kit loads the schema as CommonJS, where import.meta.url is empty.
const require = createRequire(import.meta.url ?? `file://${__filename}`)

const orm: typeof import('drizzle-orm') = require('drizzle-orm')
const pgCore: typeof import('drizzle-orm/pg-core') = require('drizzle-orm/pg-core')

export type { SQL } from 'drizzle-orm'
export type { AnyPgColumn, PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
export type PgTable = import('drizzle-orm/pg-core').PgTable

export const { and, asc, desc, eq, getTableColumns, gt, gte, inArray, is, isNotNull, isNull, lt, lte, ne, notInArray, or, sql } = orm
export const {
  PgDialect, PgTable, bigint, bigserial, boolean, check, customType, date, doublePrecision, getTableConfig, index, integer, json, jsonb, pgTable, primaryKey, smallint, text,
  timestamp, uniqueIndex, uuid,
} = pgCore

/** Built on first use, then the same: a prepared statement (`.prepare(name)`) whose SQL is
 * written once per process, and which PostgreSQL parses and plans once per connection. */
export function lazily<T>(build: () => T): () => T {
  let built: T | undefined
  return () => (built ??= build())
}

// Each backend's driver is loaded by the backend that opens it: a server on PostgreSQL never
// loads PGlite's JavaScript, nor the embedded one postgres.js. PGlite comes through its CommonJS
// build too, the one drizzle's driver requires: one copy of it in the process, not two.
export function pgliteDriver() {
  const { PGlite }: typeof import('@electric-sql/pglite') = require('@electric-sql/pglite')
  const { NodeFS }: typeof import('@electric-sql/pglite/nodefs') = require('@electric-sql/pglite/nodefs')
  const { drizzle }: typeof import('drizzle-orm/pglite') = require('drizzle-orm/pglite')
  const { migrate }: typeof import('drizzle-orm/pglite/migrator') = require('drizzle-orm/pglite/migrator')
  // The contrib extensions the migrations create (pg_trgm: similarity of opportunities).
  const { pg_trgm }: typeof import('@electric-sql/pglite/contrib/pg_trgm') = require('@electric-sql/pglite/contrib/pg_trgm')
  return { PGlite, NodeFS, drizzle, migrate, extensions: { pg_trgm } }
}
export function postgresDriver() {
  const { drizzle }: typeof import('drizzle-orm/postgres-js') = require('drizzle-orm/postgres-js')
  const { migrate }: typeof import('drizzle-orm/postgres-js/migrator') = require('drizzle-orm/postgres-js/migrator')
  return { drizzle, migrate }
}
