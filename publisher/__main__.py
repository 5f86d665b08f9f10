from publisher.cli import main

raise SystemExit(main())
