import PkgToolCLI

PkgToolMain.main()
