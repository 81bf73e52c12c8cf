// What the processors' offline servers (npm run stripe:test-server, adyen:test-server) share as commands: start,
// print the settings for the service on stdout, stop on Ctrl-C, and say plainly why a start failed.
export async function serveUntilStopped(
  name: string,
  port: number,
  start: () => Promise<{ url: string; settings: string; close(): Promise<void> }>,
): Promise<void> {
  try {
    const server = await start()
    console.log(server.settings)
    console.error(`${name} listening at ${server.url} (Ctrl-C stops it)`)
    const stop = () => void server.close().then(() => process.exit(0))
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  } catch (error) {
    const code = (error as { code?: string }).code
    console.error(
      code === 'EADDRINUSE'
        ? `port ${port} is taken: pass another with --port`
        : `could not start: ${(error as Error).message}`,
    )
    process.exit(1)
  }
}
