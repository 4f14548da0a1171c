// A REST route declared from the operation it exposes: the path names the project and any
// other path arguments, the rest of the operation's input is the query string (GET, DELETE)
// or the JSON body; docs, input and response schemas, and the operationId all come from the
// operation, and the call goes through the one way in, `registry.invoke`.
import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { callOf, type Operation, type Surface } from '../core/operations.ts'
import { ErrorResponse, ProjectRef, StringEnum } from '../schemas/atoms.ts'
import { wantsCsv } from '../core/csv.ts'
import { appError } from '../core/errors.ts'
import { sendCsv, sendCsvPage, type CsvExport } from './exports.ts'

export interface OperationRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** Path parameters are the operation's own arguments, except `project` (below). */
  url: string
  op: Operation
  /** The path parameter that names the project (its id or slug). */
  project?: string
  /** 201 for a route that creates; or a choice by result (an idempotent create answers 200). */
  status?: 201 | ((result: never) => 200 | 201)
  /**
   * A CSV answer too (GET only), for `Accept: text/csv` or `?format=csv`: the same arguments,
   * access checks and errors (JSON), through the export's operation.
   */
  csv?: CsvExport
  /**
   * The operation's version precondition (an integer argument, `if_version`) comes from the
   * `If-Match` header instead of the body, and its result's `version` goes out as the ETag
   * (RFC 9110 §8.8.3, §13.1.1). A failed precondition is a 412 `precondition_failed`.
   */
  ifMatch?: string
  /**
   * A read of one versioned thing: its result's `version` goes out as the ETag, and a GET whose
   * `If-None-Match` names that ETag is answered 304 with no body (RFC 9110 §13.1.2).
   */
  etag?: boolean
}

/** The entity-tag of a version: strong and quoted, `"3"`. */
export const etagOf = (version: number) => `"${version}"`

const IF_MATCH = /^\s*(?:(\*)|"([1-9][0-9]{0,9})")\s*$/

/**
 * The version an If-Match names: undefined for none or `*` (any version: the operation's own
 * 404 answers for a missing opportunity). Anything else than `*` or one tag this API sends is a 400.
 */
function ifMatchVersion(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined
  const m = typeof header === 'string' ? IF_MATCH.exec(header) : null
  const version = m?.[2] !== undefined ? Number(m[2]) : undefined
  if (!m || (version !== undefined && version > 2147483647)) {
    throw appError('InvalidArguments', 'If-Match must be * or one ETag this API sent, such as "3" (strong, quoted).', [
      { path: 'If-Match', message: 'must be * or one ETag this API sent, such as "3"' },
    ])
  }
  return version
}

const IfMatchHeader = Type.Object({
  'if-match': Type.Optional(
    Type.String({
      description: 'Change it only if its ETag is still this one (`"3"`, as a read or the last change answered): else 412 `precondition_failed` and nothing changes. `*`: only if it exists. Without it, the last write wins.',
    })
  ),
})

const Format = StringEnum(['json', 'csv'] as const, {
  description: '`csv` answers in CSV (text/csv, as an attachment), as `Accept: text/csv` does; `json` (the default) in JSON.',
})

/** The CSV answer in the OpenAPI document (its columns are the JSON answer's record fields). */
const CsvBody = Type.String({ description: 'CSV (RFC 4180, UTF-8): a header row of the field names, then one row per record.' })

export interface RouteGroup {
  surface: Surface
  tag: string
}

export const bearerSecurity = [{ bearer: [] }]

export function operationRoute(app: FastifyInstance, group: RouteGroup, route: OperationRoute) {
  const { op } = route
  const pathParams = [...route.url.matchAll(/:([a-z_]+)/g)].map((m) => m[1]!)
  const properties = op.input.properties as Record<string, TSchema>
  for (const p of pathParams) {
    if (p !== route.project && !properties[p]) throw new Error(`${route.method} ${route.url}: ${op.name} has no argument '${p}'`)
  }
  const params = Type.Object(Object.fromEntries(pathParams.map((p) => [p, p === route.project ? ProjectRef : properties[p]!])))
  if (route.ifMatch && !properties[route.ifMatch]) throw new Error(`${route.method} ${route.url}: ${op.name} has no argument '${route.ifMatch}'`)
  const rest: Record<string, TSchema> = Object.fromEntries(Object.entries(properties).filter(([name]) => !pathParams.includes(name) && name !== route.ifMatch))
  if (route.csv) {
    if (route.method !== 'GET') throw new Error(`${route.method} ${route.url}: only a GET route answers in CSV`)
    rest.format = Type.Optional(Format)
  }
  // The JSON answer's arguments that its CSV export has not (the listing's paging): sent with
  // CSV, they are refused as such rather than as unknown.
  const csvArguments = route.csv?.op.input.properties as Record<string, TSchema> | undefined
  const pagingOnly = new Set(csvArguments ? Object.keys(rest).filter((name) => name !== 'format' && !csvArguments[name]) : [])
  const inQuery = route.method === 'GET' || route.method === 'DELETE'
  const input = Type.Object(rest, { additionalProperties: false })
  const created = route.status !== undefined
  const argumentNames = pathParams.filter((p) => p !== route.project)

  app.route({
    method: route.method,
    url: route.url,
    schema: {
      operationId: op.name,
      tags: [group.tag],
      security: bearerSecurity,
      summary: op.title,
      description: route.csv
        ? `${op.description} Answers in CSV (a header row, then one row per record) for \`Accept: text/csv\` or \`format=csv\`.`
        : op.description,
      ...(pathParams.length > 0 ? { params } : {}),
      ...(route.ifMatch ? { headers: IfMatchHeader } : {}),
      ...(Object.keys(rest).length > 0 ? (inQuery ? { querystring: input } : { body: input }) : {}),
      response: {
        ...(route.status === 201 ? {} : { 200: route.csv ? { content: { 'application/json': { schema: op.output }, 'text/csv': { schema: CsvBody } } } : op.output }),
        ...(created ? { 201: op.output } : {}),
        '4xx': ErrorResponse,
        '5xx': ErrorResponse,
      },
    },
    async handler(request, reply) {
      const fromPath = request.params as Record<string, string>
      const args: Record<string, unknown> = { ...((inQuery ? request.query : request.body) as object | undefined) }
      for (const name of argumentNames) args[name] = fromPath[name]
      const call = callOf(request, group.surface, route.project ? fromPath[route.project] : undefined)
      if (route.csv) {
        const { format, ...all } = args
        reply.header('vary', 'Accept')
        if (wantsCsv(format, request.headers.accept)) {
          // Only what the client sent (validation filled in the listing's defaults, page and
          // page_size, which the export has not).
          const sent = new Set(new URLSearchParams(request.url.split('?')[1] ?? '').keys())
          const csvArgs = Object.fromEntries(Object.entries(all).filter(([name]) => sent.has(name) || argumentNames.includes(name)))
          const paging = Object.keys(csvArgs).filter((name) => pagingOnly.has(name))
          if (paging.length > 0 && route.csv.page) {
            // That page, as CSV: the JSON answer's own operation, arguments and errors.
            const result = await app.registry.invoke(op, all, call)
            return sendCsvPage(reply, route.csv, route.project ? fromPath[route.project]! : '', result)
          }
          if (paging.length > 0) {
            throw appError('InvalidArguments', `${paging.map((n) => `\`${n}\``).join(', ')}: a CSV export has every matching row, without pages.`,
              paging.map((path) => ({ path, message: 'does not apply to a CSV export (it has no pages)' })))
          }
          // The checks and the errors happen here, before any CSV is written.
          const result = await app.registry.invoke(route.csv.op, csvArgs, call)
          return sendCsv(reply, route.csv, result)
        }
        delete args.format
      }
      let result: unknown
      if (route.ifMatch) {
        const version = ifMatchVersion(request.headers['if-match'])
        if (version !== undefined) args[route.ifMatch] = version
        try {
          result = await app.registry.invoke(op, args, call)
        } catch (err) {
          throw preconditionFailed(err, route.ifMatch, reply)
        }
        const current = (result as { version?: unknown }).version
        if (typeof current === 'number') reply.header('etag', etagOf(current))
      } else result = await app.registry.invoke(op, args, call)
      if (route.etag) {
        const version = (result as { version?: unknown }).version
        if (typeof version === 'number') {
          const tag = etagOf(version)
          reply.header('etag', tag)
          const none = request.headers['if-none-match']
          if (none !== undefined && none.split(',').some((t) => t.trim().replace(/^W\//, '') === tag || t.trim() === '*')) return reply.code(304).send()
        }
      }
      const status = route.status === undefined ? 200 : typeof route.status === 'number' ? route.status : route.status(result as never)
      return reply.code(status).send(result)
    },
  })
}

/**
 * The operation's `conflict` on its precondition argument, as HTTP answers a failed If-Match: 412
 * `precondition_failed`, the same message, the detail naming the header, the current version as
 * the ETag. Any other error passes unchanged.
 */
function preconditionFailed(err: unknown, argument: string, reply: { header(name: string, value: string): unknown }): unknown {
  const e = err as { code?: string; message?: string; details?: { path: string; message: string }[]; version?: unknown }
  if (e?.code !== 'GD_CONFLICT' || typeof e.version !== 'number' || !e.details?.some((d) => d.path === argument)) return err
  reply.header('etag', etagOf(e.version))
  return appError('PreconditionFailed', e.message ?? 'Precondition failed.', e.details.map((d) => (d.path === argument ? { ...d, path: 'If-Match' } : d)))
}
