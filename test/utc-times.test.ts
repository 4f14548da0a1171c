// Times are read from PostgreSQL as text and made ISO in JavaScript (db/client.ts isoMillis; the
// listing's key, isoMicros): that holds only while the app's connections write a timestamptz in
// DateStyle ISO and in UTC. PostgreSQL's connections pin both (whatever the server's defaults),
// the PGlite session sets both once open. Checked here on the backend the suite runs on, with the
// text each makes, also when the database's own time zone is another.
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
  // A time written in another zone (a session whose TimeZone was not pinned) is refused, not read hours off.
  for (const text of ['2026-11-24 03:52:38+02', '2026-11-24 03:52:38.123+02', '2026-11-24 05:52:38.123456-05', '2026-11-24 03:52:38+05:30', '2026-11-24 03:52:38.5+01']) {
    t.throws(() => isoMillis(text), /not a UTC time/, `refused: ${text}`)
  }
})

t.test("the app's connection writes a timestamptz in ISO form and in UTC", async (t) => {
  const config = await testDatabase(t)
  // The database's own setting says another zone: the connection's must win (on PostgreSQL,
  // where a new connection takes it up; PGlite's one session does not read it today).
  const setup = await openDatabase(config)
  await setup.db.execute(sql.raw('do $$ begin execute format(\'alter database %I set timezone to %L\', current_database(), \'America/New_York\'); end $$'))
  await setup.close()
  const database = await openDatabase(config)
  t.teardown(() => database.close())
  const [row] = rowsOf<{ t: string; setting: string }>(await database.db.execute(sql`
    select '2026-03-29 01:30:00.25+02'::timestamptz as t, current_setting('TimeZone') as setting`))
  t.equal(row!.t, '2026-03-28 23:30:00.25+00', 'ISO, UTC, the fraction without trailing zeros')
  t.equal(isoMillis(row!.t), new Date('2026-03-29T01:30:00.25+02:00').toISOString(), 'as toISOString() writes it')
  t.match(row!.setting, /^(UTC|Etc\/UTC|GMT)$/, 'the session time zone')
})
