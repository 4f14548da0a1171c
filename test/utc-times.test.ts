// Times are read from PostgreSQL as text and made ISO in JavaScript (db/client.ts isoMillis; the
// listing's key, isoMicros): that holds only while the app's connections write a timestamptz in
// DateStyle ISO and in UTC. PostgreSQL's connections pin both (whatever the server's defaults);
// PGlite's are its own. Checked here on the backend the suite runs on, with the text each makes.
import t from 'tap'
import { sql } from '../db/orm.ts'
import { isoMillis, openDatabase, rowsOf } from '../db/client.ts'
import { testDatabase } from './helpers/app.ts'

t.test('isoMillis: every form PostgreSQL writes, with and without the UTC offset', async (t) => {
  for (const suffix of ['', '+00']) {
    t.equal(isoMillis(`2026-11-24 03:52:38${suffix}`), '2026-11-24T03:52:38.000Z', `no fraction${suffix}`)
    t.equal(isoMillis(`2026-11-24 03:52:38.1${suffix}`), '2026-11-24T03:52:38.100Z', `tenths${suffix}`)
    t.equal(isoMillis(`2026-11-24 03:52:38.12${suffix}`), '2026-11-24T03:52:38.120Z', `hundredths${suffix}`)
    t.equal(isoMillis(`2026-11-24 03:52:38.123${suffix}`), '2026-11-24T03:52:38.123Z', `milliseconds${suffix}`)
    t.equal(isoMillis(`2026-11-24 03:52:38.123456${suffix}`), '2026-11-24T03:52:38.123Z', `microseconds, truncated${suffix}`)
    t.equal(isoMillis(`2026-11-24 03:52:38.999999${suffix}`), '2026-11-24T03:52:38.999Z', `not rounded up${suffix}`)
  }
})

t.test("the app's connection writes a timestamptz in ISO form and in UTC", async (t) => {
  const database = await openDatabase(await testDatabase(t))
  t.teardown(() => database.close())
  const [row] = rowsOf<{ t: string; setting: string }>(await database.db.execute(sql`
    select '2026-03-29 01:30:00.25+02'::timestamptz as t, current_setting('TimeZone') as setting`))
  t.equal(row!.t, '2026-03-28 23:30:00.25+00', 'ISO, UTC, the fraction without trailing zeros')
  t.equal(isoMillis(row!.t), new Date('2026-03-29T01:30:00.25+02:00').toISOString(), 'as toISOString() writes it')
  t.match(row!.setting, /^(UTC|Etc\/UTC|GMT)$/, 'the session time zone')
})
