/**
 * The folder graph of src/ (docs/architecture.md): each top-level folder may import only the
 * folders listed for it, so the graph stays acyclic and a new arrow back fails `npm run lint`.
 */
const ALLOWED = {
  config: [],
  common: ['config'],
  observability: ['common', 'config'],
  database: ['common', 'config', 'observability'],
  auth: ['common', 'config', 'database', 'observability'],
  catalogue: ['common'],
  webhooks: ['auth', 'catalogue', 'common', 'config', 'database', 'observability'],
  dispatch: ['auth', 'catalogue', 'common', 'config', 'database', 'observability', 'webhooks'],
  events: ['auth', 'catalogue', 'common', 'config', 'database', 'dispatch', 'observability', 'webhooks'],
  dashboard: ['auth', 'common', 'config'],
  receiver: [],
};

const folderRules = Object.entries(ALLOWED).map(([folder, allowed]) => ({
  name: `${folder}-imports-only-${allowed.length ? allowed.join('-') : 'itself'}`,
  comment: `src/${folder} may import ${allowed.length ? allowed.map((f) => `src/${f}`).join(', ') : 'nothing else of src/'} (docs/architecture.md)`,
  severity: 'error',
  // A spec may reach further than its code (e.g. the receiver's checks against Hookline's signing).
  from: { path: `^src/${folder}/`, pathNot: '\\.spec\\.ts$' },
  to: { path: '^src/', pathNot: [`^src/(${[folder, ...allowed].join('|')})/`] },
}));

module.exports = {
  forbidden: [
    ...folderRules,
    // Inside dispatch (docs/architecture.md#dispatch): the tables and their statements lean on no
    // other part of it, sending knows nothing of queues, and events comes in through publish/ only.
    {
      name: 'dispatch-store-imports-no-sibling',
      comment: 'src/dispatch/store holds the tables and every statement on them; it imports no other part of dispatch',
      severity: 'error',
      from: { path: '^src/dispatch/store/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^src/dispatch/', pathNot: '^src/dispatch/store/' },
    },
    {
      name: 'dispatch-sending-imports-nothing-of-dispatch',
      comment: 'src/dispatch/sending signs and sends one request; it knows nothing of the queue around it',
      severity: 'error',
      from: { path: '^src/dispatch/sending/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^src/dispatch/', pathNot: '^src/dispatch/sending/' },
    },
    {
      name: 'events-enters-dispatch-through-publish',
      comment: 'src/events uses dispatch only through src/dispatch/publish/index.ts and the module',
      severity: 'error',
      from: { path: '^src/events/' },
      to: { path: '^src/dispatch/', pathNot: '^src/dispatch/(publish/index|dispatch\\.module)\\.ts$' },
    },
    {
      name: 'dispatch-files-live-in-a-concern',
      comment: 'a file of src/dispatch belongs in one of its sub-folders; only the module sits at the top',
      severity: 'error',
      from: { path: '^src/dispatch/[^/]+$', pathNot: '^src/dispatch/dispatch\\.module\\.ts$' },
      to: {},
    },
    {
      name: 'unknown-top-level-folder',
      comment: 'a new folder of src/ needs its place in the graph above and in docs/architecture.md',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: [`^src/(${Object.keys(ALLOWED).join('|')})/`] },
      to: {},
    },
    {
      name: 'no-circular',
      comment: 'files that import each other in a circle, inside a folder too',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/dashboard/public/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
