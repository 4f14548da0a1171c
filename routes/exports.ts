// The CSV answers of the routes that have one (the opportunity listing and the daily metrics),
// shared by the REST routes and the console's downloads: which operation answers, the file's
// name, and the table. The opportunity export is written batch by batch as the database
// yields it, so its memory does not grow with the number of rows.
import { Readable } from 'node:stream'
import type { Static } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import type { Operation } from '../core/operations.ts'
import { CSV_TYPE, csvHeader, csvRecords, type CsvColumns } from '../core/csv.ts'
import type { Opportunity } from '../schemas/opportunities.ts'
import type { DailyEventSummary, DailyOps } from '../schemas/metrics.ts'
import exportOpportunities from '../tools/export-opportunities.ts'
import getDailyOps from '../tools/get-daily-ops.ts'
import getDailyEventSummary from '../tools/get-daily-event-summary.ts'

export interface CsvExport<O extends Operation = Operation> {
  /** The operation that answers in CSV (called with the route's arguments, as the JSON answer's is). */
  op: O
  /** The file name's middle part: `<project>-<name>-<date>.csv`. */
  name: string
  /** The project (slug or id) and the date the file is named after. */
  naming(result: Static<O['output']>): { project: string; date: string }
  /** The CSV text, or a stream of it. */
  body(result: Static<O['output']>): string | Readable
  /** A page of the route's own (JSON) answer as CSV, for a request that sends paging arguments; without it they are a 400. */
  page?(result: unknown): string
}

const define = <O extends Operation>(e: CsvExport<O>): CsvExport => e as unknown as CsvExport

export const opportunityColumns: CsvColumns<Opportunity> = [
  ['event_id', (o) => o.event_id],
  ['received_at', (o) => o.received_at],
  ['contribution_type', (o) => o.contribution_type],
  ['status', (o) => o.status],
  ['evaluation', (o) => o.evaluation],
  ['key_information', (o) => o.key_information],
  ['reason', (o) => o.reason],
  ['suggested_action', (o) => o.suggested_action],
  ['source_url', (o) => o.source_url],
  ['external_id', (o) => o.external_id],
  ['review_note', (o) => o.review_note],
  ['review_updated_at', (o) => o.review_updated_at],
]

type DailyOpsDay = Static<typeof DailyOps>['days'][number]
export const dailyOpsColumns: CsvColumns<DailyOpsDay> = [
  ['date', (d) => d.date],
  ['registered_users', (d) => d.registered_users],
  ['daily_use_users', (d) => d.daily_use_users],
  ['active_users', (d) => d.active_users],
  ['signup_events', (d) => d.signup_events],
  ['daily_use_events', (d) => d.daily_use_events],
]

interface EventDay { date: string; event: string; count: number; unique_users: number }
export const eventSummaryColumns: CsvColumns<EventDay> = [
  ['date', (d) => d.date],
  ['event', (d) => d.event],
  ['count', (d) => d.count],
  ['unique_users', (d) => d.unique_users],
]

/** The listing: every matching opportunity, streamed a batch at a time (the next is read when the client has taken this one). */
export const opportunitiesCsv = define({
  op: exportOpportunities,
  name: 'opportunities',
  naming: (r) => ({ project: r.project, date: r.date }),
  body(r) {
    const batches = r.batches as AsyncIterable<Opportunity[]>
    return Readable.from((async function * () {
      yield csvHeader(opportunityColumns)
      for await (const batch of batches) yield csvRecords(opportunityColumns, batch)
    })(), { objectMode: false })
  },
  // `page`, `page_size` or `after` sent: that page of the listing, in the same columns.
  page: (r) => csvHeader(opportunityColumns) + csvRecords(opportunityColumns, (r as { items: Opportunity[] }).items),
})

/** One row per day of the period, oldest first, zeros included; with `compare`, the previous period's days first (the two are adjacent). */
export const dailyOpsCsv = define({
  op: getDailyOps,
  name: 'daily-ops',
  naming: (r) => ({ project: r.project, date: r.to }),
  body: (r) => csvHeader(dailyOpsColumns) + csvRecords(dailyOpsColumns, [...(r.previous?.days ?? []), ...r.days]),
})

/** One row per day and event name (a day without events has no row), oldest day first; with `compare`, the previous period's days first. */
export const dailyEventSummaryCsv = define({
  op: getDailyEventSummary,
  name: 'daily-event-summary',
  naming: (r) => ({ project: r.project, date: r.to }),
  body(r) {
    const { days, previous } = r as Static<typeof DailyEventSummary>
    return csvHeader(eventSummaryColumns) + csvRecords(eventSummaryColumns, [...(previous?.days ?? []), ...days].flatMap((d) => d.events.map((e) => ({ date: d.date, ...e }))))
  },
})

/** `attachment; filename="<project>-<name>-<date>.csv"`, with only safe characters in the name. */
export function attachment(e: CsvExport, result: unknown): string {
  const { project, date } = e.naming(result as never)
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_')
  return `attachment; filename="${safe(project)}-${e.name}-${safe(date)}.csv"`
}

/** A page as CSV: 200, text/csv, as an attachment named after the project and the page (`<project>-<name>-page-<n>.csv`). */
export function sendCsvPage(reply: FastifyReply, e: CsvExport, project: string, result: unknown) {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_')
  const page = (result as { page?: unknown }).page
  reply.header('content-type', CSV_TYPE).header('content-disposition', `attachment; filename="${safe(project)}-${e.name}-page-${safe(String(page))}.csv"`)
  return reply.code(200).send(e.page!(result))
}

/** The export's answer: 200, text/csv, as an attachment named after the project and the date. */
export function sendCsv(reply: FastifyReply, e: CsvExport, result: unknown) {
  reply.header('content-type', CSV_TYPE).header('content-disposition', attachment(e, result))
  return reply.code(200).send(e.body(result as never))
}
