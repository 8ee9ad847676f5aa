from onlineeval.cli import main

raise SystemExit(main())
