import ServeCLI

await ServeMain.main()
