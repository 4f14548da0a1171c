// CSV as RFC 4180 writes it: a header row, CRLF line ends, a field in double quotes when it
// holds a comma, a double quote, CR or LF (a quote inside doubled). A text that a spreadsheet
// would read as a formula (it starts with =, +, -, @, a tab, CR or NUL: OWASP's list and ASVS
// 5.0 §1.2.10's) gets a leading apostrophe, so opening an export never runs what someone
// submitted ("CSV injection").

export type CsvValue = string | number | boolean | null | undefined

const FORMULA_START = /^[=+\-@\t\r\0]/
const NEEDS_QUOTES = /[",\r\n]/

/** One field: numbers as they are, null as empty, texts neutralised and quoted as needed. */
export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return ''
  if (typeof value !== 'string') return String(value)
  const text = FORMULA_START.test(value) ? `'${value}` : value
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** One record, CRLF-terminated. */
export function csvRow(values: readonly CsvValue[]): string {
  return `${values.map(csvField).join(',')}\r\n`
}

/** A table's columns: a header and how to read its value from a record. */
export type CsvColumns<T> = readonly (readonly [header: string, value: (record: T) => CsvValue])[]

export function csvHeader<T>(columns: CsvColumns<T>): string {
  return csvRow(columns.map(([header]) => header))
}

export function csvRecords<T>(columns: CsvColumns<T>, records: Iterable<T>): string {
  let out = ''
  for (const record of records) out += csvRow(columns.map(([, value]) => value(record)))
  return out
}

/** The media type of every CSV answer. */
export const CSV_TYPE = 'text/csv; charset=utf-8'

/** Whether a request asks for CSV: `?format=csv`, or an Accept header that prefers text/csv to JSON. */
export function wantsCsv(format: unknown, accept: string | undefined): boolean {
  if (format === 'csv') return true
  if (format === 'json' || !accept) return false
  let csv = 0
  let json = 0
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase())
    const qParam = params.find((p) => p.startsWith('q='))
    const q = qParam ? Number(qParam.slice(2)) : 1
    const weight = Number.isFinite(q) ? q : 0
    if (type === 'text/csv') csv = Math.max(csv, weight)
    else if (type === 'application/json') json = Math.max(json, weight)
  }
  return csv > 0 && csv > json
}
