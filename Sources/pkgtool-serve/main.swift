import ServeCLI

ServeMain.main()
