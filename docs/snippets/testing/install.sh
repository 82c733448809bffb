pip install 'cdk-ts[testing]'     # moto_server, the default engine: nothing beyond pip
