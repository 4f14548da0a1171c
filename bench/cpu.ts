// CPU time spent by the server (this process) and by its PostgreSQL backends during a phase.
// Wall-clock figures depend on whatever else the machine runs; CPU per request or per event
// does much less, so the benchmark prints both. Backends are found through pg_stat_activity
// (the app's connections are named `growthdesk`) and read from /proc, which works when the
// database runs on this machine; otherwise only the server's share is reported.
import fs from 'node:fs'
import { execFileSync } from 'node:child_process'
import type { Sql } from 'postgres'

let ticksPerSecond: number | undefined
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
    } catch {
      ticksPerSecond = 100
    }
  }
  return ticksPerSecond
}

/** utime + stime of a process in ms, or undefined when it cannot be read. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // After "pid (comm) ", field 3 (state) is index 0: utime is field 14, stime field 15.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks()
  } catch {
    return undefined
  }
}

export interface CpuSnapshot {
  serverMs: number
  backends: Map<number, number> | undefined
}

export async function cpuSnapshot(sql: Sql, database: string): Promise<CpuSnapshot> {
  const usage = process.cpuUsage()
  const rows = await sql<{ pid: number }[]>`
    select pid from pg_stat_activity where datname = ${database} and application_name = 'growthdesk'`
  const backends = new Map<number, number>()
  for (const { pid } of rows) {
    const ms = processCpuMs(pid)
    if (ms === undefined) return { serverMs: (usage.user + usage.system) / 1000, backends: undefined }
    backends.set(pid, ms)
  }
  return { serverMs: (usage.user + usage.system) / 1000, backends }
}

export interface CpuUsed {
  serverMs: number
  /** Undefined when the backends' CPU cannot be read (database on another machine). */
  databaseMs: number | undefined
}

/** CPU used between two snapshots; a backend that appeared in between counts from zero. */
export function cpuUsed(before: CpuSnapshot, after: CpuSnapshot): CpuUsed {
  let databaseMs: number | undefined
  if (before.backends && after.backends) {
    databaseMs = 0
    for (const [pid, ms] of after.backends) databaseMs += ms - (before.backends.get(pid) ?? 0)
  }
  return { serverMs: after.serverMs - before.serverMs, databaseMs }
}
