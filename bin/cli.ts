// The `growthdesk` command line. Admin commands build the same app as the server on the
// configured database and call admin.ts; `tools` and `call` (service-commands.ts) talk to
// a running service over HTTP. Commands write to stdout/stderr only through the CliIo given
// here (tests pass their own); the app itself logs through Fastify.
//
// The app, the configuration and admin.ts are imported only when a command needs the
// database: loading them costs ~0.6 s, which `help` and the HTTP commands should not pay.
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import type { FastifyInstance } from 'fastify'
import type { Config, Database } from '../config.ts'
import { issuableKinds, keyKinds } from '../db/keys.ts'
import { roles } from '../schemas/atoms.ts'

import { defineCommand, type CliIo, type Command, type Invocation, type OptionSpec, type WithAppOptions } from './command.ts'
import { serviceCommands } from './service-commands.ts'
import { seedDemo } from './seed-demo.ts'
import { copyDatabaseCommand } from './copy-database.ts'

export { defineCommand, type CliIo, type Command } from './command.ts'

class UsageError extends Error {
  override name = 'UsageError'
  readonly command?: readonly string[]
  constructor(message: string, command?: readonly string[]) {
    super(message)
    this.command = command
  }
}

class CommandFailure extends Error {
  override name = 'CommandFailure'
}

const json = { type: 'boolean', description: 'print the result as one line of JSON' } as const

const adminActions = () => import('./admin.ts')

// ---------------------------------------------------------------------------------------
// Commands on the configured database.

const migrate = defineCommand({
  path: ['migrate'],
  summary: 'Apply the database migrations (the server also does this at start).',
  options: {},
  async run(inv) {
    const where = await inv.withApp(async (_app, config) => describeDatabase(config.database))
    inv.io.stdout.write(`Migrations applied: ${where} is up to date.\n`)
  },
})

const adminBootstrap = defineCommand({
  path: ['admin', 'bootstrap'],
  summary: 'Create a workspace with an owner, a project and one key of each kind.',
  details: ['The password and the keys are printed once; only their hashes are stored.'],
  options: {
    workspace: { type: 'string', value: 'NAME', description: 'workspace name (default "Default workspace")' },
    email: { type: 'string', value: 'EMAIL', description: "owner's email (default owner@<workspace>.local)" },
    project: { type: 'string', value: 'NAME', description: 'project name (default "Demo project"); its slug is derived from it' },
    json,
  },
  async run(inv) {
    const { workspace, email, project } = inv.options
    const { bootstrap, describeBootstrap } = await adminActions()
    await inv.withApp(async (app, config) => {
      const r = await bootstrap(app, { workspace, email, project })
      inv.print(r, [
        `Created workspace "${r.workspace.name}" (${r.workspace.id}) with an owner, a project and one key of each kind.`,
        ...describeBootstrap(r, config.publicUrl),
      ])
    })
  },
})

const adminCreateUser = defineCommand({
  path: ['admin', 'create-user'],
  summary: "Add a user to a project's workspace with a role, a password and MCP (gdm_) and service (gds_) keys.",
  options: {
    email: { type: 'string', value: 'EMAIL', description: "the new user's email", required: true },
    project: { type: 'string', value: 'ID_OR_SLUG', description: 'project id (prj_…) or slug', required: true },
    role: { type: 'string', description: 'role in that project', required: true, choices: roles },
    json,
  },
  async run(inv) {
    const { email, project, role } = inv.options
    const { createUser } = await adminActions()
    await inv.withApp(async (app) => {
      const r = await createUser(app, { email, project, role })
      inv.print(r, [
        `Created user ${r.user.email} (${r.user.id}), ${role} of project ${project}.`,
        `  password:  ${r.user.password}`,
        `  MCP key:   ${r.keys.mcp}`,
        `  service:   ${r.keys.service}`,
        'The keys and the password are shown once and stored only as hashes: copy them now.',
      ])
    })
  },
})

const MAX_EXPIRY_DAYS = 3650

const adminCreateKey = defineCommand({
  path: ['admin', 'create-key'],
  summary: 'Create an API key acting as an existing user.',
  details: [
    'Which kind works where: mcp (gdm_) the project-side API /api/v1/mcp and MCP /mcp; service (gds_) the tools REST API /v1',
    'and MCP /mcp; ingest (gdi_) only POST /v1/events for its project.',
    'An ingest key belongs to one project, so it needs --project.', 'The key is printed once; only its hash is stored.',
  ],
  options: {
    email: { type: 'string', value: 'EMAIL', description: 'the user the key acts as', required: true },
    kind: { type: 'string', description: 'mcp (gdm_), service (gds_) or ingest (gdi_)', required: true, choices: issuableKinds },
    project: { type: 'string', value: 'ID_OR_SLUG', description: 'narrow the key to one project of that user' },
    name: { type: 'string', value: 'NAME', description: 'a label to recognise the key by' },
    'read-only': { type: 'boolean', description: 'the key can read but not change anything' },
    'expires-in-days': { type: 'string', value: 'N', description: `the key stops working after N days (1–${MAX_EXPIRY_DAYS})` },
    json,
  },
  async run(inv) {
    const { email, kind, project, name } = inv.options
    const days = inv.options['expires-in-days']
    if (days !== undefined && !(/^\d+$/.test(days) && Number(days) >= 1 && Number(days) <= MAX_EXPIRY_DAYS)) {
      inv.usage(`--expires-in-days takes a whole number of days from 1 to ${MAX_EXPIRY_DAYS}, not '${days}'`)
    }
    const { createKey } = await adminActions()
    await inv.withApp(async (app) => {
      const expiresAt = days === undefined ? undefined : new Date(app.now().getTime() + Number(days) * 86_400_000)
      const r = await createKey(app, { email, kind, project, name, readOnly: inv.options['read-only'], expiresAt })
      inv.print(r, [
        `Created ${r.kind} key ${r.id} (${r.display}) for ${email}.`,
        `  key:        ${r.key}`,
        `  project:    ${r.project ?? "all of the user's projects"}`,
        `  read-only:  ${r.read_only ? 'yes' : 'no'}`,
        `  expires:    ${r.expires_at ?? 'never'}`,
        'The key is shown once and stored only as a hash: copy it now.',
      ])
    })
  },
})

const adminRevokeKey = defineCommand({
  path: ['admin', 'revoke-key'],
  summary: 'Revoke an API key by its id (key_…); it stops working at once.',
  details: ['Any kind (mcp gdm_, service gds_, ingest gdi_, oauth gdo_). Takes the id, never the key itself: admin list-keys shows the ids.'],
  positionals: ['KEY_ID'],
  options: { json },
  async run(inv) {
    const id = inv.args.KEY_ID
    const { revokeKey } = await adminActions()
    await inv.withApp(async (app) => {
      const r = await revokeKey(app, id)
      inv.print(r, [`Revoked key ${r.id}.`])
    })
  },
})

/** Columns of a plain-text table: each padded to its widest cell. */
function columns(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd())
}

const adminListKeys = defineCommand({
  path: ['admin', 'list-keys'],
  summary: 'List API keys (masked) with their ids, scope, expiry, last use and whether they are revoked.',
  details: [
    'Keys are shown as gdm_…abcd: the secret itself is never stored. Revoke one with admin revoke-key KEY_ID.',
    'Kinds: mcp (gdm_, project-side API and MCP), service (gds_, tools REST API and MCP), ingest (gdi_, POST /v1/events), oauth (gdo_, tokens of connected MCP clients).',
  ],
  options: {
    workspace: { type: 'string', value: 'WORKSPACE_ID', description: 'only this workspace (wsp_…; admin list-workspaces shows them)' },
    user: { type: 'string', value: 'EMAIL', description: 'only the keys acting as this user' },
    kind: { type: 'string', description: 'only this kind of key', choices: keyKinds },
    active: { type: 'boolean', description: 'hide revoked and expired keys' },
    json,
  },
  async run(inv) {
    const { listKeys } = await adminActions()
    await inv.withApp(async (app) => {
      const keys = await listKeys(app, { workspace: inv.options.workspace, email: inv.options.user, kinds: inv.options.kind ? [inv.options.kind] : undefined, activeOnly: inv.options.active })
      const state = (k: (typeof keys)[number]) => (k.revoked_at ? `revoked ${k.revoked_at}` : k.expired ? 'expired' : 'active')
      inv.print({ keys }, keys.length === 0
        ? ['No keys match.']
        : [
            ...columns([
              ['WORKSPACE', 'USER', 'KIND', 'NAME', 'KEY', 'ID', 'PROJECT', 'ACCESS', 'EXPIRES', 'LAST USED', 'STATE'],
              ...keys.map((k) => [
                k.workspace, k.user, k.kind, k.name || '-', k.display, k.id, k.project?.slug ?? 'all',
                k.read_only ? 'read-only' : 'read-write', k.expires_at ?? 'never', k.last_used_at ?? 'never', state(k),
              ]),
            ]),
            '',
        `${keys.length} key${keys.length === 1 ? '' : 's'}. Revoke one with: growthdesk admin revoke-key KEY_ID`,
          ])
    })
  },
})

const adminListWorkspaces = defineCommand({
  path: ['admin', 'list-workspaces'],
  summary: 'List workspaces with their ids (wsp_…), the --workspace of other admin commands.',
  options: { json },
  async run(inv) {
    const { listWorkspaces } = await adminActions()
    await inv.withApp(async (app) => {
      const workspaces = await listWorkspaces(app)
      inv.print({ workspaces }, workspaces.length === 0
        ? ['No workspaces yet: growthdesk admin bootstrap creates one.']
        : [
            ...columns([
              ['ID', 'NAME', 'USERS', 'PROJECTS', 'DISABLED TOOLS'],
              ...workspaces.map((w) => [w.id, w.name, String(w.users), String(w.projects), w.disabled_tools.join(',') || '-']),
            ]),
          ])
    })
  },
})

const toolSwitch = (enabled: boolean) =>
  defineCommand({
    path: ['admin', 'tools', enabled ? 'enable' : 'disable'],
    summary: enabled ? 'Enable a tool again in a workspace.' : 'Disable a tool in a workspace (hidden from /v1/tools and MCP).',
    positionals: ['NAME'],
    options: {
      workspace: { type: 'string', value: 'WORKSPACE_ID', description: 'the workspace (wsp_…)', required: true },
      json,
    },
    async run(inv) {
      const { workspace } = inv.options
      const { setToolEnabled } = await adminActions()
      await inv.withApp(async (app) => {
        const r = await setToolEnabled(app, { workspace, tool: inv.args.NAME, enabled })
        inv.print(r, [
          `${enabled ? 'Enabled' : 'Disabled'} tool '${r.tool}' in workspace ${r.workspace}.`,
          `  disabled there now: ${r.disabled_tools.length ? r.disabled_tools.join(', ') : 'none'}`,
        ])
      })
    },
  })

const adminResetPassword = defineCommand({
  path: ['admin', 'reset-password'],
  summary: 'Print a single-use link, valid for one hour, that sets a new password for a user.',
  details: [
    'For the owner who lost the password printed at first start (members can ask an owner of their workspace instead).',
    'Open the link in a browser to choose the password: that signs the user out everywhere else; their API keys keep working.',
    'The link starts with PUBLIC_URL: give this command the same PUBLIC_URL as the server. It is printed, never mailed.',
    'On PostgreSQL this works while the server runs; the embedded database admits one process: stop the server first.',
  ],
  options: {
    email: { type: 'string', value: 'EMAIL', description: "the user's email", required: true },
    json,
  },
  async run(inv) {
    const { resetPassword } = await adminActions()
    await inv.withApp(async (app) => {
      const r = await resetPassword(app, { email: inv.options.email })
      inv.print(r, [
        `Password-reset link for ${r.email}, valid once until ${r.expires_at}:`,
        `  ${r.link}`,
        'Open it in a browser to choose a new password. Anyone with the link can, so hand it over with care.',
      ])
    })
  },
})

const adminInviteMember = defineCommand({
  path: ['admin', 'invite-member'],
  summary: 'Invite someone by email to a workspace, with a role in each project; prints the link once.',
  details: [
    'Give --project and --role once per project, in pairs (the first --role is for the first --project, and so on); every',
    "project must be in one workspace. Runs invite_member as the first project's first owner, or as --as (an owner of every",
    'project named). The link works once, for 7 days; the invitee chooses a password there. It is printed once and, when',
    'mail is configured (SMTP_URL, MAIL_FROM), also mailed. Inviting the same email again replaces the earlier invitation.',
  ],
  options: {
    email: { type: 'string', value: 'EMAIL', description: "the invitee's email", required: true },
    project: { type: 'string', value: 'ID_OR_SLUG', description: 'a project (id prj_… or slug)', required: true, multiple: true },
    role: { type: 'string', description: 'the role in the --project before it', required: true, multiple: true, choices: roles },
    as: { type: 'string', value: 'OWNER_EMAIL', description: 'act as this owner (default: the first project\'s first owner)' },
    json,
  },
  async run(inv) {
    const { email, project, role, as } = inv.options
    if (project.length !== role.length) inv.usage(`give one --role per --project (${project.length} project${project.length === 1 ? '' : 's'}, ${role.length} role${role.length === 1 ? '' : 's'})`)
    const { inviteMember } = await adminActions()
    await inv.withApp(async (app) => {
      const r = await inviteMember(app, { email, projects: project.map((p, i) => ({ project: p, role: role[i]! })), as })
      inv.print(r, [
        `Invited ${r.email} (${r.id}): ${r.projects.map((p) => `${p.project} ${p.role}`).join(', ')}.`,
        `  link:     ${r.link}`,
        `  expires:  ${r.expires_at}`,
        `  mailed:   ${r.mailed ? 'yes' : app.mail.enabled ? 'no: sending failed, pass the link on yourself' : 'no (mail is not configured): pass the link on yourself'}`,
        'The link is shown once and stored only as a hash; it works once.',
      ])
    })
  },
})

const adminListMembers = defineCommand({
  path: ['admin', 'list-members'],
  summary: 'List the members of a workspace with their role per project, and its open invitations.',
  details: [
    "As the workspace's owner sees them (the projects they belong to), or as --as. Invitation links are never shown:",
    'only their hashes are stored.',
  ],
  options: {
    workspace: { type: 'string', value: 'WORKSPACE_ID', description: 'the workspace (wsp_…; admin list-workspaces shows them)', required: true },
    as: { type: 'string', value: 'EMAIL', description: "list as this member (default: the workspace's owner)" },
    json,
  },
  async run(inv) {
    const { workspace, as } = inv.options
    const { listMembers } = await adminActions()
    await inv.withApp(async (app) => {
      const r = await listMembers(app, { workspace, as })
      const roleList = (projects: { project: string; role: string }[]) => projects.map((p) => `${p.project}:${p.role}`).join(',') || '-'
      inv.print(r, [
        ...columns([
          ['EMAIL', 'WORKSPACE ROLE', 'PROJECTS', 'JOINED'],
          ...r.members.map((m) => [m.email, m.workspace_role, roleList(m.projects), m.joined_at]),
        ]),
        '',
        ...(r.invitations.length === 0
          ? ['No open invitations.']
          : columns([
            ['INVITATION', 'EMAIL', 'PROJECTS', 'INVITED BY', 'EXPIRES'],
            ...r.invitations.map((i) => [i.id, i.email, roleList(i.projects), i.invited_by ?? '-', `${i.expires_at}${i.expired ? ' (expired)' : ''}`]),
          ])),
        `(as ${r.acting_as})`,
      ])
    })
  },
})

const adminUpdateMember = defineCommand({
  path: ['admin', 'update-member'],
  summary: "Set a member's role in a project (adding them to it); takes effect at once.",
  details: ["Runs update_member as the project's first owner. A project keeps an owner: demoting its last owner is refused."],
  options: {
    email: { type: 'string', value: 'EMAIL', description: "the member's email", required: true },
    project: { type: 'string', value: 'ID_OR_SLUG', description: 'project id (prj_…) or slug', required: true },
    role: { type: 'string', description: 'the new role', required: true, choices: roles },
    json,
  },
  async run(inv) {
    const { email, project, role } = inv.options
    const { updateMember } = await adminActions()
    await inv.withApp(async (app) => {
      const r = await updateMember(app, { email, project, role })
      inv.print(r, [`${r.email} is ${r.role} of ${r.project} (was ${r.previous_role ?? 'not a member'}).`])
    })
  },
})

const adminRemoveMember = defineCommand({
  path: ['admin', 'remove-member'],
  summary: 'Remove a member from one project, or from their workspace (sessions end, keys and OAuth grants revoked at once).',
  details: [
    "With --project: their membership of that project ends (as the project's first owner). Without: they leave the",
    "workspace (as the workspace's owner): their console sessions end and their keys and connected apps stop working at",
    'once, on every instance. The account stays, so their past work keeps its author; an invitation can bring them back.',
  ],
  options: {
    email: { type: 'string', value: 'EMAIL', description: "the member's email", required: true },
    project: { type: 'string', value: 'ID_OR_SLUG', description: 'remove them from this project only' },
    json,
  },
  async run(inv) {
    const { email, project } = inv.options
    const { removeMember } = await adminActions()
    await inv.withApp(async (app) => {
      const r = await removeMember(app, { email, project })
      inv.print(r, [r.removed_from === 'project'
        ? `${r.email} is no longer a member of ${r.project}.`
        : `Removed ${r.email} from the workspace: ${r.sessions_ended} session(s) ended, ${r.keys_revoked} key(s) revoked, ${r.oauth_grants_revoked} connected app(s) disconnected.`])
    })
  },
})

const adminCancelInvitation = defineCommand({
  path: ['admin', 'cancel-invitation'],
  summary: 'Cancel an open invitation by its id (inv_…); its link stops working.',
  details: ['admin list-members shows the ids of the open invitations.'],
  options: {
    id: { type: 'string', value: 'INVITATION_ID', description: 'the invitation (inv_…)', required: true },
    json,
  },
  async run(inv) {
    const { cancelInvitation } = await adminActions()
    await inv.withApp(async (app) => {
      const r = await cancelInvitation(app, inv.options.id)
      inv.print(r, [`Cancelled the invitation ${r.id} to ${r.email}.`])
    })
  },
})

const adminRotateSecretsKey = defineCommand({
  path: ['admin', 'rotate-secrets-key'],
  summary: 'Seal every secret the database keeps again with SECRETS_KEY (after changing it; the old key in SECRETS_KEY_PREVIOUS).',
  details: [
    'Webhook signing secrets and the console\'s cookie secret are stored sealed (AES-256-GCM) under the server key:',
    'SECRETS_KEY, or the key file DATA_DIR/secrets.key. To rotate it: set SECRETS_KEY to a new key and SECRETS_KEY_PREVIOUS',
    'to the old one (or the old key file\'s content), run this, then remove SECRETS_KEY_PREVIOUS. Webhook secrets stay the',
    'same (receivers change nothing); previous webhook secrets past their overlap are dropped.',
    '--forget-unreadable: for a key that is lost. Webhooks whose secret no key opens get a new one that nobody knows:',
    'their owners rotate it (rotate_webhook_secret) and give receivers the new one. Everyone signs in to the console again.',
  ],
  options: {
    'forget-unreadable': { type: 'boolean', description: 'replace or drop the secrets no configured key opens (a lost key)' },
    json,
  },
  async run(inv) {
    await inv.withApp(async (app) => {
      const r = { key_id: app.secrets.box.keyId, ...(await app.secrets.reseal()), forgotten: app.secrets.forgotten }
      const lost = r.forgotten
      inv.print(r, [
        `Sealed ${r.resealed} secret${r.resealed === 1 ? '' : 's'} again with key id ${r.key_id} (${app.secrets.source}); ${r.expiredCleared} expired previous webhook secret${r.expiredCleared === 1 ? '' : 's'} dropped.`,
        ...(lost
          ? [
              `Forgotten: ${lost.webhooks.length} webhook secret(s)${lost.webhooks.length ? ` — rotate them: ${lost.webhooks.join(', ')}` : ''}; ` +
                `${lost.previousSecrets.length} previous webhook secret(s); ${lost.appSecrets.length ? lost.appSecrets.join(', ') : 'no app secret'} made again.` +
                (lost.signingKeys.length ? ` New ed25519 key pairs (give receivers the new public key): ${lost.signingKeys.join(', ')}.` : ''),
            ]
          : []),
        'Nothing in the database is sealed with another key now: SECRETS_KEY_PREVIOUS (and an old key file) can go.',
      ])
    }, { forgetUnreadableSecrets: inv.options['forget-unreadable'] })
  },
})

// ---------------------------------------------------------------------------------------
// THE COMMAND TABLE, in the order `help` lists it. A new command is a module that exports
// `defineCommand({...})` and one line here; dispatch, help and argument checks need no change.
export const commands: readonly Command[] = [
  migrate,
  ...serviceCommands,
  adminBootstrap,
  adminCreateUser,
  adminCreateKey,
  adminRevokeKey,
  adminListKeys,
  adminListWorkspaces,
  toolSwitch(false),
  toolSwitch(true),
  adminResetPassword,
  adminInviteMember,
  adminListMembers,
  adminUpdateMember,
  adminRemoveMember,
  adminCancelInvitation,
  adminRotateSecretsKey,
  seedDemo,
  copyDatabaseCommand,
]

// ---------------------------------------------------------------------------------------
// Dispatch.

const HELP_FLAGS = new Set(['--help', '-h'])

/** Runs one command line; resolves to the exit code (0 ok, 1 failure, 2 usage error). */
export async function main(argv: string[], io: Partial<CliIo> = {}): Promise<number> {
  const out: CliIo = { stdout: io.stdout ?? process.stdout, stderr: io.stderr ?? process.stderr, env: io.env ?? process.env }
  try {
    return await dispatch(argv, out)
  } catch (err) {
    return await report(err, out)
  }
}

async function dispatch(argv: string[], io: CliIo): Promise<number> {
  const [first, ...rest] = argv
  if (first === undefined) {
    io.stdout.write(globalHelp())
    return 2
  }
  if (first === 'help' || HELP_FLAGS.has(first)) {
    io.stdout.write(helpFor(first === 'help' ? rest : []))
    return 0
  }
  const command = resolve(argv)
  if (!command) {
    // A group such as `admin` asked for help, or a wrong word: explain what exists.
    if (argv.some((a) => HELP_FLAGS.has(a))) {
      io.stdout.write(helpFor(argv.filter((a) => !a.startsWith('-'))))
      return 0
    }
    throw unknownCommand(argv)
  }
  const parsed = parseInvocation(command, argv.slice(command.path.length))
  if (parsed === 'help') {
    io.stdout.write(commandHelp(command))
    return 0
  }
  const inv: Invocation = {
    ...parsed,
    io,
    withApp: (fn, options) => withApp(io, fn, options),
    print(result, lines) {
      io.stdout.write(parsed.options.json === true ? `${JSON.stringify(result)}\n` : `${lines.join('\n')}\n`)
    },
    usage(message) {
      throw new UsageError(message, command.path)
    },
    fail(message) {
      throw new CommandFailure(message)
    },
  }
  return (await command.run(inv)) ?? 0
}

/** The command with the longest path that argv starts with. */
function resolve(argv: readonly string[]): Command | undefined {
  let best: Command | undefined
  for (const c of commands) {
    if (startsWith(argv, c.path) && (!best || c.path.length > best.path.length)) best = c
  }
  return best
}

const startsWith = (list: readonly string[], prefix: readonly string[]) => prefix.every((word, i) => list[i] === word)

/** The longest prefix of `words` that is a group of commands (like `admin`), and what it holds. */
function group(words: readonly string[]): { path: string[]; next: string[] } {
  let depth = 0
  while (depth < words.length && commands.some((c) => c.path.length > depth + 1 && startsWith(c.path, words.slice(0, depth + 1)))) {
    depth++
  }
  const path = words.slice(0, depth)
  const next = [...new Set(commands.filter((c) => startsWith(c.path, path)).map((c) => c.path[depth]!))]
  return { path, next }
}

function unknownCommand(argv: readonly string[]): UsageError {
  if (argv[0]!.startsWith('-')) return new UsageError(`unknown option '${argv[0]}'; options go after the command`)
  const firstOption = argv.findIndex((a) => a.startsWith('-'))
  const words = firstOption === -1 ? argv : argv.slice(0, firstOption)
  const { path, next } = group(words)
  if (path.length === 0) return new UsageError(`unknown command '${words[0]}'`)
  const name = path.join(' ')
  if (words.length === path.length) return new UsageError(`'${name}' needs one of: ${next.join(', ')}`, path)
  return new UsageError(`unknown command '${name} ${words[path.length]}'; '${name}' takes one of: ${next.join(', ')}`, path)
}

interface Parsed {
  options: Record<string, string | string[] | boolean | undefined>
  args: Record<string, string>
}

/** Checks the words after the command against its spec; every problem is a usage error. */
function parseInvocation(command: Command, argv: string[]): Parsed | 'help' {
  const specs = command.options
  const name = command.path.join(' ')
  const usage = (message: string) => new UsageError(message, command.path)
  // Lenient parsing with tokens lets us word every error ourselves, on one line.
  const { tokens } = parseArgs({
    args: argv,
    options: {
      ...Object.fromEntries(Object.entries(specs).map(([key, spec]) => [key, { type: spec.type }])),
      help: { type: 'boolean', short: 'h' },
    },
    strict: false,
    allowPositionals: true,
    tokens: true,
  })
  if (tokens.some((t) => t.kind === 'option' && t.name === 'help')) return 'help'

  const options: Parsed['options'] = {}
  /** The values of options given more than once (`multiple`), in order. */
  const lists: Record<string, string[]> = {}
  const positionals: string[] = []
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value)
    if (token.kind !== 'option') continue
    const spec = Object.hasOwn(specs, token.name) ? specs[token.name] : undefined
    const flag = token.rawName
    if (!spec) throw usage(`unknown option '${flag}' for '${name}'`)
    if (token.name in options && !spec.multiple) throw usage(`${flag} is given twice`)
    if (spec.type === 'boolean') {
      if (token.value !== undefined) throw usage(`${flag} takes no value`)
      options[token.name] = true
      continue
    }
    if (token.value === undefined) throw usage(`${flag} needs a value (${placeholder(spec)})`)
    // `--email --json` would otherwise take '--json' as the email.
    if (!token.inlineValue && token.value.startsWith('-')) throw usage(`${flag} needs a value (${placeholder(spec)}) before '${token.value}'`)
    if (spec.choices && !spec.choices.includes(token.value)) {
      throw usage(`${flag} must be one of ${spec.choices.join(', ')}, not '${token.value}'`)
    }
    if (spec.multiple) (lists[token.name] ??= []).push(token.value)
    else options[token.name] = token.value
  }
  for (const [key, spec] of Object.entries(specs)) {
    if (spec.type === 'boolean') options[key] ??= false
    else if (spec.multiple) options[key] = lists[key] ?? []
    if (spec.required && (spec.multiple ? (lists[key] ?? []).length === 0 : options[key] === undefined)) throw usage(`'${name}' needs --${key} ${placeholder(spec)}`)
  }
  const names = command.positionals ?? []
  if (positionals.length < names.length) throw usage(`'${name}' needs ${names.slice(positionals.length).join(' ')}`)
  if (positionals.length > names.length) throw usage(`unexpected argument '${positionals[names.length]}' for '${name}'`)
  return { options, args: Object.fromEntries(names.map((n, i) => [n, positionals[i]!])) }
}

async function withApp<T>(io: CliIo, fn: (app: FastifyInstance, config: Config) => Promise<T>, options: WithAppOptions = {}): Promise<T> {
  const [{ loadConfig }, { buildApp }, { DatabaseInUseError }, { PluginError }, { SecretsKeyError }] = await Promise.all([
    import('../config.ts'),
    import('../app.ts'),
    import('../db/client.ts'),
    import('../plugins/tool-plugins.ts'),
    import('../db/secret-box.ts'),
  ])
  const config = loadConfig(io.env)
  if (config.database.kind === 'pglite' && config.database.dataDir === undefined) {
    io.stderr.write('growthdesk: warning: DATABASE_URL=memory:// is discarded when this command ends.\n')
  }
  let app: FastifyInstance
  try {
    app = await buildApp({ config, logger: false, forgetUnreadableSecrets: options.forgetUnreadableSecrets })
  } catch (err) {
    if (err instanceof DatabaseInUseError || err instanceof PluginError || err instanceof SecretsKeyError) throw err
    // A bare "connect ECONNREFUSED" does not say which setting to look at.
    throw new Error(`could not open ${describeDatabase(config.database)}: ${describeError(err)}`, { cause: err })
  }
  try {
    await app.ready()
    return await fn(app, config)
  } finally {
    await app.close()
  }
}

function describeDatabase(database: Database): string {
  if (database.kind === 'pglite') return database.dataDir ? `the embedded database in ${database.dataDir}` : 'the in-memory database'
  // Host and database name only: the URL may hold a password.
  const url = new URL(database.url)
  return `the PostgreSQL database ${url.host}${url.pathname}`
}

/** One line on stderr; 2 for usage errors, 1 for everything else. */
async function report(err: unknown, io: CliIo): Promise<number> {
  if (err instanceof UsageError) {
    const help = err.command ? `growthdesk help ${err.command.join(' ')}` : 'growthdesk help'
    io.stderr.write(`growthdesk: ${oneLine(err.message)} (see '${help}')\n`)
    return 2
  }
  if (err instanceof Error && (await isOperatorFailure(err))) {
    io.stderr.write(`growthdesk: ${oneLine(err.message)}\n`)
    return 1
  }
  const debug = io.env.LOG_LEVEL === 'debug' || io.env.LOG_LEVEL === 'trace'
  io.stderr.write(`growthdesk: ${oneLine(describeError(err))}${debug ? '' : ' (LOG_LEVEL=debug shows the stack)'}\n`)
  if (debug) {
    for (let e: unknown = err; e instanceof Error; e = e.cause) io.stderr.write(`${e === err ? '' : 'Caused by: '}${e.stack ?? e.message}\n`)
  }
  return 1
}

/** Failures whose message is written for the operator (e.g. how to free a locked database): no stack, no hint. */
async function isOperatorFailure(err: Error): Promise<boolean> {
  if (err instanceof CommandFailure) return true
  const [{ AdminError }, { ConfigError }, { DatabaseInUseError }, { PluginError }, { SecretsKeyError }] = await Promise.all([
    adminActions(),
    import('../config.ts'),
    import('../db/client.ts'),
    import('../plugins/tool-plugins.ts'),
    import('../db/secret-box.ts'),
  ])
  return err instanceof AdminError || err instanceof ConfigError || err instanceof DatabaseInUseError || err instanceof PluginError || err instanceof SecretsKeyError
}

function describeError(err: unknown): string {
  // Node reports a refused connection to a host with several addresses as an AggregateError without a message.
  if (err instanceof AggregateError && !err.message) return err.errors.map(describeError).join('; ')
  if (err instanceof Error) return err.message || err.name
  return String(err)
}

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim()

// ---------------------------------------------------------------------------------------
// Help, generated from the table.

const placeholder = (spec: OptionSpec) => spec.choices?.join('|') ?? spec.value ?? 'VALUE'

function usageLine(command: Command): string {
  const parts = ['growthdesk', ...command.path, ...(command.positionals ?? [])]
  for (const [key, spec] of Object.entries(command.options)) {
    const option = spec.type === 'boolean' ? `--${key}` : `--${key} ${placeholder(spec)}`
    parts.push(spec.required ? option : `[${option}]`)
    if (spec.multiple) parts.push(`[${option} …]`)
  }
  return parts.join(' ')
}

function table(rows: readonly [string, string][]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length))
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`)
}

function globalHelp(): string {
  return [
    'growthdesk — administer a growthdesk deployment from the command line',
    '',
    'Usage: growthdesk <command> [options]',
    '',
    'Commands:',
    ...table([...commands.map((c): [string, string] => [c.path.join(' '), c.summary]), ['help [command]', 'Show this help, or the options of a command.']]),
    '',
    'Commands that touch the database use the same settings as the server:',
    ...table([
      ['DATABASE_URL', 'postgres://… for PostgreSQL; unset: the embedded database in DATA_DIR'],
      ['DATA_DIR', 'folder of the embedded database (default ./.data); stop the server first'],
      ['LOG_LEVEL', 'debug prints the stack of unexpected errors'],
    ]),
    '',
    'Keys: gdm_ (mcp) for the project-side API and MCP, gds_ (service) for the tools REST API and MCP — what',
    "'tools' and 'call' need in SERVICE_API_KEY —, gdi_ (ingest) for POST /v1/events. Each command's help says which it takes.",
    '',
    "Run 'growthdesk help <command>' for its options. Exit codes: 0 success, 1 failure, 2 usage error.",
    '',
  ].join('\n')
}

function commandHelp(command: Command): string {
  const options = Object.entries(command.options).map(([key, spec]): [string, string] => [
    spec.type === 'boolean' ? `--${key}` : `--${key} ${placeholder(spec)}`,
    spec.description + (spec.required ? ' (required)' : '') + (spec.multiple ? ' (may be repeated)' : ''),
  ])
  return [
    `Usage: ${usageLine(command)}`,
    '',
    command.summary,
    ...(command.details ?? []),
    ...(options.length ? ['', 'Options:', ...table(options)] : []),
    '',
  ].join('\n')
}

/** `help`, `help <command>` or `help <group>` (e.g. `help admin`). */
function helpFor(words: readonly string[]): string {
  if (words.length === 0) return globalHelp()
  const exact = commands.find((c) => c.path.length === words.length && startsWith(words, c.path))
  if (exact) return commandHelp(exact)
  const inGroup = commands.filter((c) => c.path.length > words.length && startsWith(c.path, words))
  if (inGroup.length === 0) throw new UsageError(`no command '${words.join(' ')}'`)
  return [
    'Commands:',
    ...table(inGroup.map((c): [string, string] => [c.path.join(' '), c.summary])),
    '',
    "Run 'growthdesk help <command>' for its options.",
    '',
  ].join('\n')
}

// ---------------------------------------------------------------------------------------
// Run directly (`node bin/cli.ts …`, as `npm run migrate` does); bin/growthdesk.js calls main itself.

function isEntryPoint(): boolean {
  const script = process.argv[1]
  if (!script) return false
  try {
    return fs.realpathSync(script) === fs.realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
}

if (isEntryPoint()) process.exitCode = await main(process.argv.slice(2))
