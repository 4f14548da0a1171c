// The error catalogue (DESIGN §4). Every failure a client can see is one of these,
// rendered as {"error":{"code","message","details"}} on REST and inside MCP results.
import createError, { type FastifyErrorConstructor } from '@fastify/error'
import { unavailableReason } from '../db/unavailable.ts'

// Not `import … from 'node:http'`: an ES import of node:http builds its namespace from every
// export, loading Node's fetch (undici) at start (~12 MB, ~75 ms); see routes/oauth-client-metadata.ts.
const { STATUS_CODES } = process.getBuiltinModule('node:http')

export interface ErrorDetail {
  path: string
  message: string
}

export interface ErrorBody {
  error: { code: string; message: string; details?: ErrorDetail[] }
}

type Ctor = FastifyErrorConstructor<{ code: string; statusCode: number }, [string]>

const make = (code: string, status: number): Ctor => createError(`GD_${code.toUpperCase()}`, '%s', status) as Ctor

export const Errors = {
  InvalidArguments: make('invalid_arguments', 400),
  InvalidJson: make('invalid_json', 400),
  Unauthorized: make('unauthorized', 401),
  Forbidden: make('forbidden', 403),
  ReviewAccessRequired: make('review_access_required', 403),
  NotFound: make('not_found', 404),
  MethodNotAllowed: make('method_not_allowed', 405),
  Conflict: make('conflict', 409),
  PreconditionFailed: make('precondition_failed', 412),
  PayloadTooLarge: make('payload_too_large', 413),
  UnsupportedMediaType: make('unsupported_media_type', 415),
  RateLimited: make('rate_limited', 429),
  Internal: make('internal', 500),
  Unavailable: make('unavailable', 503),
}

/** Seconds a 503 `unavailable` asks the client to wait (its Retry-After). */
export const UNAVAILABLE_RETRY_AFTER = 1

const unavailableMessages = {
  connection_lost: 'The connection to the database was lost before the answer came. Retry in a moment.',
  disk_full: 'The database cannot write: its disk is full. Retry once space is freed.',
}

/** An error of the catalogue, optionally with per-field details. */
export function appError(kind: keyof typeof Errors, message: string, details?: ErrorDetail[]): Error & { statusCode: number } {
  const err = new Errors[kind](message) as Error & { statusCode: number; details?: ErrorDetail[] }
  if (details) err.details = details
  return err
}

/**
 * At most this many details in one error: a 600 KB array of wrong items would otherwise be
 * answered with 300,000 of them (15 MB). The message still counts them all.
 */
export const MAX_DETAILS = 100

/** `total`: how many fields failed in all, when `details` holds only the first of them. */
export function invalidArguments(details: ErrorDetail[], message?: string, total = details.length) {
  return appError('InvalidArguments', message ?? describeDetails(details, total), details.slice(0, MAX_DETAILS))
}

function describeDetails(details: ErrorDetail[], total: number): string {
  const first = details[0]
  if (!first) return 'The arguments are not valid.'
  const where = first.path ? `${first.path}: ` : ''
  const more = total > 1 ? ` (and ${total - 1} more)` : ''
  return `Invalid arguments — ${where}${first.message}${more}.`
}

/** The 400 of a failed schema validation: its first details, and how many fields failed in all. */
export function validationFailed(errors: Parameters<typeof detailsFromValidation>[0], root = '') {
  const { details, total } = detailsFromValidation(errors, root)
  return invalidArguments(details, undefined, total)
}

/**
 * Ajv-style validation errors → details with a readable path (`events[3].timestamp`): the first
 * MAX_DETAILS of them, and how many there are. Past those, errors are only counted — describing
 * each of 300,000 wrong items cost 1.5 s of CPU for a 600 KB body.
 */
export function detailsFromValidation(
  errors: ReadonlyArray<{ instancePath: string; message?: string; keyword: string; params: Record<string, unknown> }>,
  root = ''
): { details: ErrorDetail[]; total: number } {
  const seen = new Set<string>()
  const details: ErrorDetail[] = []
  let uncounted = 0
  for (const e of errors) {
    if (details.length >= MAX_DETAILS * 2) {
      if (e.keyword !== 'anyOf' && e.keyword !== 'if') uncounted++
      continue
    }
    let pointer = e.instancePath
    let message = e.message ?? 'is invalid'
    if (e.keyword === 'required') {
      pointer += `/${String(e.params.missingProperty)}`
      message = 'is required'
    } else if (e.keyword === 'additionalProperties') {
      pointer += `/${String(e.params.additionalProperty)}`
      message = 'is not a known field'
    } else if (e.keyword === 'enum' && Array.isArray(e.params.allowedValues)) {
      message = `must be one of ${e.params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
    } else if (e.keyword === 'anyOf' || e.keyword === 'if') {
      continue // the branch errors carry the useful message
    }
    const path = toPath(root, pointer)
    const key = `${path}\u0000${message}`
    if (seen.has(key)) continue
    seen.add(key)
    details.push({ path, message })
  }
  const merged = mergeLiteralUnions(details)
  return { details: merged.slice(0, MAX_DETAILS), total: merged.length + uncounted }
}

function toPath(root: string, pointer: string): string {
  let path = root
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    path += /^\d+$/.test(part) ? `[${part}]` : path ? `.${part}` : part
  }
  return path
}

/** A union of literals fails once per literal; say it once, listing the allowed values. */
function mergeLiteralUnions(details: ErrorDetail[]): ErrorDetail[] {
  if (!details.some((d) => d.message === 'must be equal to constant')) return details
  const byPath = new Map<string, ErrorDetail[]>()
  for (const d of details) byPath.set(d.path, [...(byPath.get(d.path) ?? []), d])
  const out: ErrorDetail[] = []
  for (const [path, list] of byPath) {
    const constants = list.filter((d) => d.message === 'must be equal to constant')
    if (constants.length > 1) {
      out.push({ path, message: 'is not one of the allowed values' })
      out.push(...list.filter((d) => d.message !== 'must be equal to constant'))
    } else out.push(...list)
  }
  return out
}

/** The first kind of the catalogue with each status (400 is invalid_arguments, 403 forbidden). */
const byStatus = new Map<number, keyof typeof Errors>()
for (const [kind, Ctor] of Object.entries(Errors)) {
  const status = new Ctor('').statusCode
  if (!byStatus.has(status)) byStatus.set(status, kind as keyof typeof Errors)
}
const otherClientErrors = new Map<number, Ctor>()

/**
 * A 4xx that did not come from the catalogue (a plugin's own error), as an error of the catalogue
 * with the same status; a status the catalogue lacks gets a code from its reason phrase
 * (416 → `range_not_satisfiable`). The message is the generic one of the status: a plugin's own
 * text is not ours to show.
 */
export function clientError(status: number): Error & { statusCode: number } {
  const reason = STATUS_CODES[status] ?? 'Bad Request'
  const kind = byStatus.get(status)
  if (kind) return appError(kind, `${reason}.`)
  let Ctor = otherClientErrors.get(status)
  if (!Ctor) {
    Ctor = make(reason.toLowerCase().replace(/[^a-z]+/g, '_').replace(/^_|_$/g, ''), status)
    otherClientErrors.set(status, Ctor)
  }
  return new Ctor(`${reason}.`) as Error & { statusCode: number }
}

export function errorBody(err: { code?: string; message: string; details?: ErrorDetail[] }): ErrorBody {
  const code = err.code?.startsWith('GD_') ? err.code.slice(3).toLowerCase() : 'internal'
  return { error: { code, message: err.message, ...(err.details?.length ? { details: err.details } : {}) } }
}

/**
 * The one mapping from anything thrown to what a client sees (DESIGN §4): an error of the
 * catalogue keeps its status and message; a database that lost its connection or whose disk is
 * full is a 503 `unavailable` (db/unavailable.ts; REST adds Retry-After); anything else is a
 * generic 500 whose cause the caller logs (`internal`), never shown. REST sends it as the body,
 * MCP as `isError` content, the console as an error page.
 */
export function errorResponse(err: unknown): { status: number; body: ErrorBody; internal: boolean } {
  const e = err as { code?: string; statusCode?: number; message?: string; details?: ErrorDetail[] }
  const status = e?.code?.startsWith('GD_') ? (e.statusCode ?? 500) : 500
  if (status < 500 || status === 503) return { status, body: errorBody(e as { message: string }), internal: false }
  const reason = unavailableReason(err)
  if (reason) return { status: 503, body: errorBody(appError('Unavailable', unavailableMessages[reason])), internal: false }
  return { status, body: errorBody(appError('Internal', 'Something went wrong on our side; it has been logged.')), internal: true }
}
