export AWS_PROFILE=...                       # credentials for the target account
npx cdk bootstrap aws://ACCOUNT/REGION       # once per account and Region
npx cdk deploy -c table_prefix=telemetry -c period=daily -c retain_periods=14
npx cdk destroy
