// A strict RFC 4180 reader for the tests: CRLF records, quoted fields with doubled quotes; a
// bare LF or CR outside quotes, a quote inside an unquoted field or a record of another width
// than the header is an error, so a test reading an export checks its shape too.
export function parseCsv(text: string): string[][] {
  const records: string[][] = []
  let i = 0
  while (i < text.length) {
    const record: string[] = []
    for (;;) {
      let field = ''
      if (text[i] === '"') {
        i++
        for (;;) {
          if (i >= text.length) throw new Error('unterminated quoted field')
          if (text[i] === '"') {
            if (text[i + 1] === '"') { field += '"'; i += 2; continue }
            i++
            break
          }
          field += text[i++]
        }
      } else {
        while (i < text.length && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') {
          if (text[i] === '"') throw new Error(`a quote in an unquoted field at ${i}`)
          field += text[i++]
        }
      }
      record.push(field)
      if (text[i] === ',') { i++; continue }
      if (text[i] === '\r' && text[i + 1] === '\n') { i += 2; break }
      throw new Error(`expected a comma or CRLF at ${i}, found ${JSON.stringify(text.slice(i, i + 5))}`)
    }
    if (records.length > 0 && record.length !== records[0]!.length) throw new Error(`record ${records.length} has ${record.length} fields, the header ${records[0]!.length}`)
    records.push(record)
  }
  return records
}

/** The records as objects keyed by the header row. */
export function csvObjects(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text)
  if (!header) throw new Error('no header row')
  return rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]!])))
}
