// npm run build:client: the typed client as a package of its own, in dist/client-package/package, ready for
// `npm pack` or `npm publish`. Its code is src/client (and the two schema modules it runs: the problem types and
// the key syntax), bundled to one ESM and one CommonJS file; its types are src/client/api.ts's, generated from
// openapi.yaml, so it needs neither TypeBox nor anything else of the server; its one dependency is standardwebhooks
// (webhook verification).
import { execFileSync } from 'node:child_process'
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { build, type BuildOptions } from 'esbuild'
import { rollup } from 'rollup'
import { dts } from 'rollup-plugin-dts'

const ROOT = new URL('../../', import.meta.url).pathname
const OUT = join(ROOT, 'dist/client-package')
const STAGE = join(OUT, 'stage')
const PACKAGE = join(OUT, 'package')
export const CLIENT_PACKAGE_NAME = 'payments-api-client'
export const CLIENT_PACKAGE_DIR = PACKAGE

async function stageSources(): Promise<void> {
  await rm(OUT, { recursive: true, force: true })
  await mkdir(join(STAGE, 'schemas'), { recursive: true })
  const rewrite = (source: string) => source.replaceAll("'../schemas/", "'./schemas/")
  for (const file of await readdir(join(ROOT, 'src/client'))) {
    if (!file.endsWith('.ts')) continue
    await writeFile(join(STAGE, file), rewrite(await readFile(join(ROOT, 'src/client', file), 'utf8')))
  }
  for (const file of ['problem-types.ts', 'idempotency-key.ts'])
    await copyFile(join(ROOT, 'src/schemas', file), join(STAGE, 'schemas', file))
  await writeFile(
    join(STAGE, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        lib: ['es2022', 'dom'],
        types: [],
        strict: true,
        declaration: true,
        emitDeclarationOnly: true,
        outDir: join(OUT, 'types'),
        skipLibCheck: true,
      },
      include: ['./**/*.ts'],
    }),
  )
}

async function compile(): Promise<void> {
  // Type-checks the staged sources against the printed types, and writes their declarations.
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(STAGE, 'tsconfig.json')], {
    stdio: 'inherit',
  })
  const common: BuildOptions = {
    entryPoints: [join(STAGE, 'index.ts')],
    bundle: true,
    external: ['standardwebhooks'],
    target: 'es2022',
    logLevel: 'warning',
  }
  await build({ ...common, format: 'esm', platform: 'neutral', outfile: join(PACKAGE, 'dist/index.js') })
  await build({ ...common, format: 'cjs', platform: 'node', outfile: join(PACKAGE, 'dist/index.cjs') })
  const bundle = await rollup({
    input: join(OUT, 'types/index.d.ts'),
    plugins: [dts()],
    external: ['standardwebhooks'],
  })
  await bundle.write({ file: join(PACKAGE, 'dist/index.d.ts'), format: 'es' })
  await bundle.close()
  // One declaration file, for require() as well: it imports nothing relative, so it reads the same either way.
  await copyFile(join(PACKAGE, 'dist/index.d.ts'), join(PACKAGE, 'dist/index.d.cts'))
}

async function writeManifest(): Promise<void> {
  const root = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    version: string
    dependencies: Record<string, string>
  }
  const manifest = {
    name: CLIENT_PACKAGE_NAME,
    version: root.version,
    description: 'Typed client for the payments API: one Idempotency-Key per operation, held still across its retries.',
    license: 'MIT',
    type: 'module',
    exports: {
      '.': {
        import: { types: './dist/index.d.ts', default: './dist/index.js' },
        require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
      },
      './package.json': './package.json',
    },
    // For tools that predate "exports" (TypeScript's moduleResolution node10, older bundlers).
    main: './dist/index.cjs',
    module: './dist/index.js',
    types: './dist/index.d.ts',
    files: ['dist', 'README.md', 'LICENSE'],
    sideEffects: false,
    engines: { node: '>=20.19' },
    dependencies: { standardwebhooks: root.dependencies.standardwebhooks },
  }
  await writeFile(join(PACKAGE, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  await copyFile(join(ROOT, 'src/client/README.md'), join(PACKAGE, 'README.md'))
  await copyFile(join(ROOT, 'LICENSE'), join(PACKAGE, 'LICENSE'))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await stageSources()
  await compile()
  await writeManifest()
  await rm(STAGE, { recursive: true })
  await rm(join(OUT, 'types'), { recursive: true })
  console.log(`built ${CLIENT_PACKAGE_NAME} in ${PACKAGE}; npm pack it from there`)
}
